import { readFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { openApiText, OPENAPI_FILE, REFERENCE_FILE, referenceText } from '../../scripts/api-reference.ts';
import { DEFAULT_KEY_LIMITS } from '../../src/auth/consumer-keys/consumer-keys.ts';
import { ERROR_REFERENCE } from '../../src/contract/error-reference.ts';
import { ErrorCode } from '../../src/contract/schemas.ts';
import { METHOD_NOT_ALLOWED } from '../../src/http/errors.ts';
import type { OpenApiDocument } from '../../src/http/openapi.ts';
import { projectPath } from '../../src/util/project-file.ts';

/**
 * openapi.json and docs/api-reference.md are generated (`npm run api-reference`): the committed
 * files must be what the code generates now, and the reference must name everything the document
 * holds. (test/int/http/openapi.test.ts holds the served document to openapi.json.)
 */
const read = (file: string) => readFileSync(projectPath(file), 'utf8');
const committedDoc = () => JSON.parse(read(OPENAPI_FILE)) as OpenApiDocument;
type Json = Record<string, unknown>;

describe('the generated API files', () => {
  it('openapi.json is the document of the default configuration', () => {
    expect(read(OPENAPI_FILE) === openApiText(), `${OPENAPI_FILE} is stale: run npm run api-reference`).toBe(true);
  });

  it('docs/api-reference.md is the reference generated from it', () => {
    expect(read(REFERENCE_FILE) === referenceText(), `${REFERENCE_FILE} is stale: run npm run api-reference`).toBe(true);
  });

  it("the typed client's types are what openapi-typescript makes of openapi.json (its build makes them anew)", async () => {
    const generated = astToString(await openapiTS(new URL(`file://${projectPath(OPENAPI_FILE)}`)));
    const committed = read('clients/typescript/src/openapi.d.ts');
    expect(committed.endsWith(generated), 'clients/typescript/src/openapi.d.ts is stale: run npm run build in clients/typescript').toBe(true);
  });

  it('a change to the API is a change to both', () => {
    const doc = committedDoc();
    (doc.paths['/search']!.get!.parameters as unknown[]).push({ name: 'sort', in: 'query', schema: { type: 'string' } });
    expect(`${JSON.stringify(doc, null, 2)}\n`).not.toBe(openApiText());
  });
});

describe('the reference', () => {
  const reference = read(REFERENCE_FILE);
  const doc = committedDoc();

  it('has a section for every operation, and every parameter of each with its default', () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const section = reference.split(`### ${method.toUpperCase()} ${path}\n`)[1]?.split('\n### ')[0];
        expect(section, `${method} ${path}`).toBeDefined();
        expect(section).toContain(`\`${String(op.operationId)}\``);
        for (const raw of op.parameters as Json[]) {
          const name = String(raw.$ref).split('/').pop()!;
          const p = doc.components.parameters[name] as Json & { schema: Json };
          const row = section!.split('\n').find((line) => line.startsWith(`| \`${String(p.name)}\` |`));
          expect(row, `${path} ${String(p.name)}`).toBeDefined();
          if (p.schema.default !== undefined) expect(row).toContain(`\`${String(p.schema.default)}\``);
          if (p.schema.maximum !== undefined) expect(row).toContain(`${String(p.schema.minimum)} to ${String(p.schema.maximum)}`);
        }
        for (const status of Object.keys(op.responses as Json)) expect(section).toMatch(new RegExp(`^\\| ${status} \\|`, 'm'));
      }
    }
  });

  it('lists every field of every object, in order', () => {
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      const section = reference.split(`\n### ${name}\n`)[1]!.split('\n### ')[0]!;
      const fields = [...section.matchAll(/^\| `([a-z_]+)`/gm)].map((m) => m[1]);
      expect(fields, name).toEqual(Object.keys(schema.properties as Json));
    }
  });

  it('lists every header of the document, Catalog-Cursor and the RateLimit fields among them', () => {
    for (const header of Object.keys(doc.components.headers)) expect(reference).toContain(`| \`${header}\` |`);
    expect(reference).toContain('| `Catalog-Cursor` |');
    expect(reference).toContain('| `RateLimit` |');
  });

  it('lists every error code, with its status and whether to retry', () => {
    const codes = [...Object.values(ErrorCode), METHOD_NOT_ALLOWED].sort();
    expect(ERROR_REFERENCE.map((e) => e.code).sort()).toEqual(codes);
    for (const e of ERROR_REFERENCE) {
      const row = reference.split('\n').find((line) => line.startsWith(`| \`${e.code}\` |`));
      expect(row, e.code).toBeDefined();
      expect(row).toContain(` ${e.statuses.join(', ')} `);
      expect(row).toMatch(/\| (No|Yes|Not from this cursor)[^|]*\|$/);
    }
    for (const status of [408, 413, 431]) expect(ERROR_REFERENCE.find((e) => e.statuses.includes(status))?.code).toBe(ErrorCode.BAD_REQUEST);
  });

  it('has one table of budgets by caller and family, with the numbers of the code', () => {
    const table = reference.split('\n## Budgets\n')[1]!.split('\n## ')[0]!;
    expect(table).toContain('| Family | Spent by | Anonymous (per address) | Keyed (per key, default) | Signed-in assistant (per grant) |');
    const row = (family: string) => table.split('\n').find((line) => line.startsWith(`| ${family} |`))!.replace(/ \|$/, '').split(' | ');
    expect(row('search').slice(2, 5)).toEqual(['30', String(DEFAULT_KEY_LIMITS.search), '30']);
    expect(row('export').slice(2, 4)).toEqual(['6', String(DEFAULT_KEY_LIMITS.export)]);
    expect(row('changes').slice(2, 4)).toEqual(['120', String(DEFAULT_KEY_LIMITS.changes)]);
    expect(row('other').slice(2, 5)).toEqual(['60', String(DEFAULT_KEY_LIMITS.other), '60']);
    expect(table).toMatch(/X-RateLimit-Limit.*RateLimit-Policy/s);
  });
});
