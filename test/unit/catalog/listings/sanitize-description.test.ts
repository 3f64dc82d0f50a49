import { describe, expect, it } from 'vitest';
import { sanitizeDescription } from '../../../../src/catalog/listings/sanitize-description.ts';
import { htmlToText } from '../../../../src/search/text.ts';

describe('description sanitizing', () => {
  it('keeps words apart where dropped block tags stood', () => {
    const html = sanitizeDescription('<div>big</div><table><tr><td>cell</td><td>other</td></tr></table>');
    expect(htmlToText(html).split(' ')).toEqual(['big', 'cell', 'other']);
  });

  it('turns headings into the levels a description may use', () => {
    expect(sanitizeDescription('<h1>Title</h1><h6>Small</h6>')).toBe('<h2>Title</h2><h4>Small</h4>');
  });

  it('changes nothing the second time', () => {
    const once = sanitizeDescription('<h1>A</h1><div>b <b>c</b></div><p>d</p><script>x</script>');
    expect(sanitizeDescription(once)).toBe(once);
  });

  it('settles paragraphs that a removed tag had nested, so a second pass changes nothing', () => {
    const once = sanitizeDescription('<p><A<p><p>');
    expect(once).not.toContain('<p><p>');
    expect(sanitizeDescription(once)).toBe(once);
    const list = sanitizeDescription('<p>Intro <span><ul><li>one</li></ul></span></p>');
    expect(sanitizeDescription(list)).toBe(list);
  });
});
