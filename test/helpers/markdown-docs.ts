import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import { lexer, type Token, type Tokens } from 'marked';

/**
 * The project's Markdown read the way GitHub renders it: its files, the anchors its headings
 * get, its relative links, and the shell blocks marked as runnable (docs/development.md,
 * "Runnable blocks").
 */

/** Folders that hold no documentation of the project: dependencies, builds, data, test output. */
const SKIPPED = new Set(['node_modules', 'dist', 'test-artifacts', 'coverage']);

/** Every Markdown file of the project, as paths relative to `root` with forward slashes. */
export function markdownFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue;
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile() && entry.name.endsWith('.md')) out.push(rel);
    }
  };
  walk('');
  return out.sort();
}

/** Every token of a document, nested ones (list items, table cells, inline) included, in order. */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const t = token as Token & { tokens?: Token[]; items?: Token[]; header?: Tokens.TableCell[]; rows?: Tokens.TableCell[][] };
    if (t.tokens) yield* walk(t.tokens);
    if (t.items) yield* walk(t.items);
    if (t.header) for (const cell of t.header) yield* walk(cell.tokens);
    if (t.rows) for (const row of t.rows) for (const cell of row) yield* walk(cell.tokens);
  }
}

/** A heading's text as GitHub slugs it: what it shows, without Markdown syntax. */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      const inner = (t as { tokens?: Token[] }).tokens;
      if (inner) return plainText(inner);
      return t.type === 'text' || t.type === 'codespan' || t.type === 'escape' ? (t as { text: string }).text : '';
    })
    .join('');
}

/** The anchors a document's headings get on GitHub, repeated headings numbered as GitHub numbers them. */
export function headingAnchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const token of walk(lexer(markdown))) {
    if (token.type === 'heading') anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens)));
  }
  return anchors;
}

/** The links and images of a document whose target is in the project (not a URL with a scheme). */
function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  for (const token of walk(lexer(markdown))) {
    if (token.type !== 'link' && token.type !== 'image') continue;
    const href = (token as Tokens.Link).href;
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue;
    out.push(href);
  }
  return out;
}

/**
 * The links of `docs` (path relative to the project → Markdown text) that lead nowhere: a file
 * that does not exist, a target outside the project, or an anchor that no heading of the target
 * has. `exists` says whether a project path other than a document of `docs` exists.
 */
export function brokenLinks(docs: ReadonlyMap<string, string>, exists: (relPath: string) => boolean): string[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (file: string): Set<string> => {
    let set = anchors.get(file);
    if (!set) anchors.set(file, (set = headingAnchors(docs.get(file)!)));
    return set;
  };
  const broken: string[] = [];
  for (const [file, text] of docs) {
    for (const href of relativeLinks(text)) {
      const hash = href.indexOf('#');
      const target = safeDecode(hash === -1 ? href : href.slice(0, hash));
      const anchor = hash === -1 ? undefined : safeDecode(href.slice(hash + 1));
      const resolved = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target)).replace(/\/$/, '');
      if (resolved.startsWith('../') || resolved === '..' || path.posix.isAbsolute(target)) {
        broken.push(`${file}: ${href} (outside the project)`);
        continue;
      }
      if (!docs.has(resolved) && !exists(resolved)) {
        broken.push(`${file}: ${href} (no such file)`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!docs.has(resolved)) {
        if (resolved.endsWith('.md')) broken.push(`${file}: ${href} (not a document read here)`);
        // An anchor into a source file (#L10) is GitHub's line link: not checked.
        continue;
      }
      if (!anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${href} (no heading "${anchor}" in ${resolved})`);
    }
  }
  return broken;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The project's Markdown documents, read: path relative to `root` → text. */
export function readDocs(root: string): Map<string, string> {
  return new Map(markdownFiles(root).map((f) => [f, readFileSync(path.join(root, f), 'utf8')]));
}

/** Whether a project path exists, as a file or a folder. */
export function projectPathExists(root: string): (relPath: string) => boolean {
  return (relPath) => existsSync(path.join(root, relPath)) && (statSync(path.join(root, relPath)).isFile() || statSync(path.join(root, relPath)).isDirectory());
}

export interface RunnableBlock {
  /** The document and the 1-based line of the block's fence. */
  readonly file: string;
  readonly line: number;
  /** The name after `runnable:`, for a block a test of its own runs (a script that runs until stopped). */
  readonly name: string | undefined;
  readonly code: string;
}

const MARKER = /^<!--\s*runnable(?::\s*([a-z0-9-]+))?\s*-->\s*$/;

/**
 * The shell blocks of a document marked as runnable: an HTML comment `<!-- runnable -->` (or
 * `<!-- runnable: NAME -->`) on the line just before a ```sh fence. A marker followed by anything
 * else is an error, so a marker never silently stops applying.
 */
export function runnableBlocks(file: string, markdown: string): RunnableBlock[] {
  const tokens = lexer(markdown);
  const out: RunnableBlock[] = [];
  let offset = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const at = offset;
    offset += token.raw.length;
    if (token.type !== 'html') continue;
    const m = MARKER.exec(token.raw.trim());
    if (!m) continue;
    const line = markdown.slice(0, at).split('\n').length;
    const next = tokens[i + 1];
    if (next?.type !== 'code' || (next as Tokens.Code).lang !== 'sh') {
      throw new Error(`${file}:${line}: a runnable marker must stand on the line just before a \`\`\`sh block`);
    }
    out.push({ file, line: line + 1, name: m[1], code: (next as Tokens.Code).text });
  }
  return out;
}

/** Hosts a runnable block may name: loopback only. */
const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/;

/** The hosts of the URLs a block names that are not loopback addresses. */
export function foreignHosts(code: string): string[] {
  const hosts: string[] = [];
  for (const m of code.matchAll(/\bhttps?:\/\/(\[[^\]]*\]|[^/:"'\s$)]+)/g)) {
    if (!LOOPBACK.test(m[1]!)) hosts.push(m[1]!);
  }
  return hosts;
}
