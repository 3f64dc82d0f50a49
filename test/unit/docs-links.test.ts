import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/util/project-file.ts';
import { brokenLinks, headingAnchors, markdownFiles, projectPathExists, readDocs, runnableBlocks } from '../helpers/markdown-docs.ts';

/**
 * Docs that cannot rot: every relative link and anchor in the project's Markdown (README,
 * ARCHITECTURE, SECURITY, CHANGELOG, docs/, the folders' READMEs) leads to a file and a heading
 * that exist, with GitHub's heading anchors.
 */
const ROOT = path.dirname(projectPath('package.json'));

describe('the Markdown of the project', () => {
  it('is read whole: the root documents, docs/ and the folder READMEs, not dependencies or builds', () => {
    const files = markdownFiles(ROOT);
    for (const f of ['README.md', 'ARCHITECTURE.md', 'SECURITY.md', 'CHANGELOG.md', 'docs/api.md', 'docs/operating.md', 'src/web/README.md', 'projector/README.md']) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => f.startsWith('node_modules/') || f.startsWith('dist/'))).toEqual([]);
  });

  it('has no link to a missing file or to a heading that is not there', () => {
    expect(brokenLinks(readDocs(ROOT), projectPathExists(ROOT))).toEqual([]);
  });

  it('marks runnable blocks only where a shell block follows', () => {
    const docs = readDocs(ROOT);
    expect(() => [...docs].flatMap(([f, text]) => runnableBlocks(f, text))).not.toThrow();
  });
});

describe('the link check', () => {
  const exists = (): boolean => false;

  it('finds a missing file, a missing heading in another document and a missing heading in the same one', () => {
    const docs = new Map([
      ['README.md', '# Service\n\nSee [the API](docs/api.md#errors), [limits](docs/api.md#limits), [gone](docs/gone.md) and [below](#usage).\n'],
      ['docs/api.md', '# The API\n\n## Errors\n\nBack to the [README](../README.md#service).\n'],
    ]);
    expect(brokenLinks(docs, exists)).toEqual([
      'README.md: docs/api.md#limits (no heading "limits" in docs/api.md)',
      'README.md: docs/gone.md (no such file)',
      'README.md: #usage (no heading "usage" in README.md)',
    ]);
  });

  it('refuses a link that leaves the project', () => {
    expect(brokenLinks(new Map([['docs/a.md', '[spec](../../spec.md)\n']]), () => true)).toEqual(['docs/a.md: ../../spec.md (outside the project)']);
  });

  it('reads links in tables and lists, and leaves URLs with a scheme and code alone', () => {
    const docs = new Map([['a.md', '# A\n\n| x |\n|---|\n| [t](#nope) |\n\n- [l](#also-nope)\n\n[web](https://example.com/#x) `[c](#code)`\n\n```md\n[f](#fenced)\n```\n']]);
    expect(brokenLinks(docs, exists)).toEqual(['a.md: #nope (no heading "nope" in a.md)', 'a.md: #also-nope (no heading "also-nope" in a.md)']);
  });

  it("slugs headings as GitHub does: code spans, punctuation, accents and repeats", () => {
    const anchors = headingAnchors('# The `catalog` command\n## Faults, and what clients see\n## Node.js versions and CI\n## Décisions\n## Start-up\n## Start-up\n## Under faults (`npm run chaos`)\n');
    expect([...anchors]).toEqual(['the-catalog-command', 'faults-and-what-clients-see', 'nodejs-versions-and-ci', 'décisions', 'start-up', 'start-up-1', 'under-faults-npm-run-chaos']);
  });

  it('finds runnable blocks by their marker, and refuses a marker that stands before anything else', () => {
    const md = 'Intro\n\n<!-- runnable -->\n```sh\ncurl -fsS "$API/categories"\n```\n\n<!-- runnable: mirror -->\n```sh\nwhile :; do sleep 1; done\n```\n\n```sh\nnot marked\n```\n';
    expect(runnableBlocks('a.md', md)).toEqual([
      { file: 'a.md', line: 4, name: undefined, code: 'curl -fsS "$API/categories"' },
      { file: 'a.md', line: 9, name: 'mirror', code: 'while :; do sleep 1; done' },
    ]);
    expect(() => runnableBlocks('b.md', '<!-- runnable -->\n```json\n{}\n```\n')).toThrow('b.md:1: a runnable marker');
    expect(() => runnableBlocks('c.md', '<!-- runnable -->\n\nText.\n')).toThrow('c.md:1');
  });
});
