import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_DESCRIPTION, SERVICE_TITLE, serviceIcons } from '../../../src/contract/service-identity.ts';
import { SERVICE_VERSION } from '../../../src/util/version.ts';
import { runCatalogCommand, type CommandRun } from '../../helpers/review.ts';
import { serverJsonValidator } from '../../helpers/server-json-schema.ts';

/**
 * `catalog mcp server-json` run as an operator runs it, a child process of bin/catalog.js: the
 * document it prints for a few PUBLIC_URLs, validated against the registry's rules and its schema of 2025-12-11 where at hand
 * (docs/schemas/) with ajv; the name it derives; --name and --out; the warnings on stderr; and a
 * one-line refusal, exit status 2, for bad options. It needs no database.
 */
const validate = serverJsonValidator();
const STACK_TRACE = /^\s+at .+[(:]\d+/m;

/** HOST and PORT unset unless given, so PUBLIC_URL's default is the documented one. */
async function mcp(args: string[], env: Record<string, string> = {}): Promise<CommandRun> {
  const run = await runCatalogCommand(['mcp', ...args], { PUBLIC_URL: '', HOST: '', PORT: '', LOG_LEVEL: 'warn', ...env });
  expect(run.stderr).not.toMatch(STACK_TRACE);
  return run;
}

function printed(run: CommandRun): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe('catalog mcp server-json', () => {
  const cases = [
    { publicUrl: 'https://catalog.example.com', base: 'https://catalog.example.com', name: 'com.example.catalog/catalog', warns: [] },
    { publicUrl: '', base: 'http://127.0.0.1:3000', name: '1.0.0.127/catalog', warns: ['PUBLIC_URL is not set', '127.0.0.1 is a loopback address', 'not https'] },
    { publicUrl: 'https://directory.example.org:8443/', base: 'https://directory.example.org:8443', name: 'org.example.directory/catalog', warns: [] },
    { publicUrl: 'http://[::1]:3000', base: 'http://[::1]:3000', name: '0-0-0-0-0-0-0-1/catalog', warns: ['[::1] is a loopback address', 'not https'] },
  ];

  for (const c of cases) {
    it(`PUBLIC_URL=${c.publicUrl || '(unset)'}: a document the schema accepts, named ${c.name}`, async () => {
      const run = await mcp(['server-json'], { PUBLIC_URL: c.publicUrl });
      const doc = printed(run);
      expect(validate(doc)).toEqual([]);
      expect(doc).toEqual({
        $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
        name: c.name,
        title: SERVICE_TITLE,
        description: SERVICE_DESCRIPTION,
        version: SERVICE_VERSION,
        websiteUrl: c.base,
        icons: serviceIcons(c.base),
        remotes: [{ type: 'streamable-http', url: `${c.base}/api/mcp` }],
      });
      expect((doc.description as string).length).toBeLessThanOrEqual(100);
      expect(run.stdout.endsWith('}\n')).toBe(true);
      // One line per warning, each saying it is one; none for a public https address.
      const lines = run.stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(c.warns.length);
      for (const [i, warning] of c.warns.entries()) {
        expect(lines[i]).toMatch(/^catalog mcp server-json: warning: /);
        expect(lines[i]).toContain(warning);
      }
    });
  }

  it('--name replaces the derived name; the schema still accepts the document', async () => {
    const doc = printed(await mcp(['server-json', '--name', 'com.example/product-catalog'], { PUBLIC_URL: 'https://catalog.example.com' }));
    expect(doc.name).toBe('com.example/product-catalog');
    expect(validate(doc)).toEqual([]);
  });

  describe('--out', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'catalog-server-json-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('writes the file instead of stdout, and says so on stderr', async () => {
      const file = path.join(dir, 'server.json');
      const run = await mcp(['server-json', '--out', file], { PUBLIC_URL: 'https://catalog.example.com' });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(`catalog mcp server-json: wrote ${file} (com.example.catalog/catalog ${SERVICE_VERSION})\n`);
      const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      expect(doc.name).toBe('com.example.catalog/catalog');
      expect(validate(doc)).toEqual([]);
    });

    it('a file that cannot be written: one line naming --out, exit status 1', async () => {
      const file = path.join(dir, 'no-such-folder', 'server.json');
      const run = await mcp(['server-json', '--out', file], { PUBLIC_URL: 'https://catalog.example.com' });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(`catalog mcp server-json: --out ${file}: cannot write it: its folder does not exist\n`);
    });
  });

  it('bad options: one line naming the option, exit status 2, nothing on stdout', async () => {
    const refusals: [string[], string][] = [
      [['--nme', 'x'], '--nme'],
      [['--name'], '--name'],
      [['--out'], '--out'],
      [['--name', 'catalog'], '--name "catalog"'],
      [['--name', 'com.example/a/b'], '--name "com.example/a/b"'],
      [['--out', ''], '--out'],
      [['positional'], 'positional'],
    ];
    const runs = await Promise.all(refusals.map(([args]) => mcp(['server-json', ...args], { PUBLIC_URL: 'https://catalog.example.com' })));
    for (const [i, run] of runs.entries()) {
      const [args, named] = refusals[i]!;
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr.split('\n').filter(Boolean), args.join(' ')).toHaveLength(1);
      expect(run.stderr, args.join(' ')).toMatch(/^catalog mcp server-json: /);
      expect(run.stderr, args.join(' ')).toContain(named);
    }
  });
});

describe('catalog mcp', () => {
  it('--help explains server-json; no subcommand or an unknown one is refused with status 2', async () => {
    const [help, bare, unknown] = await Promise.all([mcp(['--help']), mcp([]), mcp(['publish'])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('catalog mcp server-json [--name NAME] [--out FILE]');
    expect(help.stdout).toContain('--name NAME');
    expect(help.stdout).toContain('--out FILE');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('server-json');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("catalog mcp: unknown command 'publish' (catalog mcp --help)\n");
  });

  it("is listed in catalog's own help", async () => {
    const run = await runCatalogCommand(['--help'], {});
    expect(run.stdout).toMatch(/^ {2}mcp +.*server-json/m);
  });
});
