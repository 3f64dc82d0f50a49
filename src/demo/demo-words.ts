/** English helpers for the demo catalog's copy. */

export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function sentence(s: string): string {
  return `${capitalize(s)}.`;
}

export function article(word: string): 'a' | 'an' {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
