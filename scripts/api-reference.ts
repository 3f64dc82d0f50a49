/**
 * `npm run api-reference`: writes openapi.json (the OpenAPI document the service serves under its
 * default configuration) and docs/api-reference.md (the reference generated from it, from the
 * error codes of src/contract/error-reference.ts and from the budgets' defaults). With `--check`
 * it writes nothing and fails when either file differs from what it would write; a test does the
 * same, so the committed files cannot drift from the code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_KEY_LIMITS } from '../src/auth/consumer-keys/consumer-keys.ts';
import { INVALID_KEYS_PER_MINUTE } from '../src/budgets/budgets.ts';
import { loadConfig, type Config } from '../src/config/config.ts';
import { ERROR_REFERENCE } from '../src/contract/error-reference.ts';
import { buildOpenApiDocument, openApiOptions, type OpenApiDocument } from '../src/http/openapi.ts';

type Json = Record<string, unknown>;

export const OPENAPI_FILE = 'openapi.json';
export const REFERENCE_FILE = 'docs/api-reference.md';

/** The configuration with every variable at its default. */
function defaultConfig(): Config {
  return loadConfig({}, {});
}

/** The document as the service serves it under the default configuration, as the file holds it. */
export function openApiText(config: Config = defaultConfig()): string {
  return `${JSON.stringify(buildOpenApiDocument(openApiOptions(config)), null, 2)}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
const anchor = (name: string) => name.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');

function deref(doc: OpenApiDocument, node: unknown): Json {
  let n = node as Json;
  while (typeof n.$ref === 'string') {
    n = (n.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((acc, part) => (acc as Json)[part], doc) as Json;
  }
  return n;
}

/** A schema's type in words: `string (uri)`, `integer`, [Product](#product), `string or null`. */
function typeOf(schema: Json): string {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop()!;
    return `[${name}](#${anchor(name)})`;
  }
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeOf).join(' or ');
  if (Array.isArray(schema.enum)) return `one of ${(schema.enum as unknown[]).map((v) => code(String(v))).join(', ')}`;
  if (Array.isArray(schema.type)) return (schema.type as string[]).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf((schema.items ?? {}) as Json)}`;
  const format = typeof schema.format === 'string' ? ` (${schema.format})` : '';
  return `${String(schema.type ?? 'any')}${format}`;
}

/** A schema's constraints in words. */
function constraintsOf(schema: Json): string {
  const out: string[] = [];
  const range = (min: unknown, max: unknown, unit: string) => {
    if (min !== undefined && max !== undefined) out.push(`${String(min)} to ${String(max)}${unit}`);
    else if (min !== undefined) out.push(`at least ${String(min)}${unit}`);
    else if (max !== undefined) out.push(`at most ${String(max)}${unit}`);
  };
  range(schema.minLength, schema.maxLength, ' characters');
  range(schema.minimum, schema.maximum, '');
  // Long patterns restate a format (uuid, date-time): the format says it.
  if (typeof schema.pattern === 'string' && schema.pattern.length <= 40) out.push(`pattern ${code(schema.pattern)}`);
  if (Array.isArray(schema.anyOf)) for (const alt of schema.anyOf as Json[]) if (alt.type !== 'null') out.push(constraintsOf(alt));
  return out.filter(Boolean).join('; ');
}

function describe(schema: Json): string {
  if (typeof schema.description === 'string') return schema.description;
  if (Array.isArray(schema.anyOf)) for (const alt of schema.anyOf as Json[]) if (typeof alt.description === 'string') return alt.description;
  return '';
}

function operationSection(doc: OpenApiDocument, path: string, method: string, op: Json): string[] {
  const lines: string[] = [];
  lines.push(`### ${method.toUpperCase()} ${path}`, '');
  lines.push(`${String(op.summary)} (operation ${code(String(op.operationId))}).`, '');
  lines.push(String(op.description), '');
  const params = ((op.parameters ?? []) as unknown[]).map((p) => deref(doc, p));
  if (params.length) {
    lines.push('| Parameter | In | Type | Constraints | Default | Description |', '|---|---|---|---|---|---|');
    for (const p of params) {
      const schema = (p.schema ?? {}) as Json;
      const dflt = schema.default === undefined ? (p.required ? 'required' : '—') : code(String(schema.default));
      lines.push(`| ${code(String(p.name))} | ${String(p.in)} | ${typeOf(schema)} | ${cell(constraintsOf(schema)) || '—'} | ${dflt} | ${cell(String(p.description ?? ''))} |`);
    }
    lines.push('');
  } else lines.push('No parameters.', '');
  lines.push('| Status | Answer | Body | Headers |', '|---|---|---|---|');
  for (const [status, raw] of Object.entries(op.responses as Json)) {
    const resp = deref(doc, raw);
    const content = (resp.content ?? {}) as Record<string, Json>;
    const body = Object.entries(content)
      .map(([type, c]) => {
        const item = c['x-item-schema'] as Json | undefined;
        return item ? `${code(type)}: one ${typeOf(item)} per line` : `${code(type)}: ${typeOf((c.schema ?? {}) as Json)}`;
      })
      .join('; ');
    const headers = Object.keys((resp.headers ?? {}) as Json)
      .map((h) => code(h))
      .join(', ');
    lines.push(`| ${status} | ${cell(String(resp.description ?? ''))} | ${body || 'none'} | ${headers || '—'} |`);
  }
  lines.push('');
  return lines;
}

function schemaSection(name: string, schema: Json): string[] {
  const lines = [`### ${name}`, ''];
  if (typeof schema.description === 'string') lines.push(schema.description, '');
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  lines.push(
    `Fields, in this order (${schema.additionalProperties === false ? 'no others' : 'others may be added'}; each is always present unless marked optional):`,
    '',
    '| Field | Type | Constraints | Description |',
    '|---|---|---|---|',
  );
  for (const [field, prop] of Object.entries(props)) {
    const optional = required.has(field) ? '' : ' (optional)';
    lines.push(`| ${code(field)}${optional} | ${typeOf(prop)} | ${cell(constraintsOf(prop)) || '—'} | ${cell(describe(prop))} |`);
  }
  lines.push('');
  return lines;
}

function budgetSection(config: Config): string[] {
  const r = config.rateLimits;
  const held = config.connections;
  const row = (family: string, spent: string, anonymous: number | string, keyed: number | string, signedIn: number | string) =>
    `| ${family} | ${spent} | ${String(anonymous)} | ${String(keyed)} | ${String(signedIn)} |`;
  return [
    '## Budgets',
    '',
    'Requests a minute, by caller and family, under the default configuration (an operator may set others:',
    '[docs/operating.md](operating.md#configuration); a key\'s own budgets are set when it is made: [docs/keys.md](keys.md)).',
    'An anonymous caller is counted by its address (an IPv6 client by its /64); a keyed one (`Authorization: Bearer ck_…`) by its key, across every server;',
    'a signed-in assistant (an MCP client a maker connected, [docs/makers.md](makers.md)) by its grant. REST and MCP share the budgets.',
    '',
    '| Family | Spent by | Anonymous (per address) | Keyed (per key, default) | Signed-in assistant (per grant) |',
    '|---|---|---|---|---|',
    row('search', '`GET /search`, the MCP `search_products` tool', r.searchPerMinute, DEFAULT_KEY_LIMITS.search, r.signedIn.searchPerMinute),
    row('other', 'every other call under `/api/v1` (404s and 405s too), the other MCP tools, resources, completions, `prompts/get`', r.otherPerMinute, DEFAULT_KEY_LIMITS.other, r.signedIn.otherPerMinute),
    row('export', '`GET /export`', r.exportPerMinute, DEFAULT_KEY_LIMITS.export, '— (no MCP export)'),
    row('changes', '`GET /changes` (a long poll counts once)', r.changesPerMinute, DEFAULT_KEY_LIMITS.changes, '— (no MCP feed)'),
    row('pages', 'the web pages (directory, makers, admins)', r.pagesPerMinute, '— (pages take no key)', '— (pages take no key)'),
    '',
    `Held at once: ${held.longPolls.perAddress} long polls per address (${held.longPolls.perKey} per key, ${held.longPolls.total} per process) and`,
    `${held.exports.perAddress} exports per address (${held.exports.perKey} per key, ${held.exports.total} per process); past the first two the answer is 429, past the`,
    `process's 503, both with Retry-After. An address sending more than ${INVALID_KEYS_PER_MINUTE} invalid keys in a minute is answered 429.`,
    '',
    'Every counted answer reports its budget in `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, `RateLimit-Policy`',
    'and `RateLimit` (the MCP endpoint on its HTTP answer too; see [Headers](#headers)); a 429 adds `Retry-After`: wait that many',
    'seconds, then retry.',
    '',
  ];
}

function errorSection(): string[] {
  const retryText = {
    no: 'No: the same request fails again; fix it.',
    'after Retry-After': 'Yes, after the seconds of `Retry-After`, with jitter.',
    'with back-off': 'Yes, a few times, with growing jittered waits.',
    'after a new export': 'Not from this cursor: export again and follow the feed from the new `Catalog-Cursor`.',
  } as const;
  return [
    '## Errors',
    '',
    'Every error is the [Error](#error) object `{code, message}` (a 400 adds `data.issues`, one entry per rejected parameter), with',
    '`Cache-Control: no-store`. Codes are stable; a client branches on `code`, never on `message`. Over MCP the same code is in the tool error.',
    '',
    '| Code | Status | Meaning | Retry? |',
    '|---|---|---|---|',
    ...ERROR_REFERENCE.map((e) => {
      const where = e.where === 'makers' ? ' (maker tools and forms only)' : '';
      return `| ${code(e.code)} | ${e.statuses.join(', ')} | ${cell(e.meaning)}${where} | ${retryText[e.retry]} |`;
    }),
    '',
  ];
}

/** docs/api-reference.md as the committed file holds it. */
export function referenceText(config: Config = defaultConfig()): string {
  const doc = buildOpenApiDocument(openApiOptions(config));
  const lines: string[] = [
    '# API reference',
    '',
    '<!-- Generated by `npm run api-reference` from openapi.json and the code: do not edit by hand. -->',
    '',
    `Generated from [openapi.json](../openapi.json) (OpenAPI ${doc.openapi}, API version ${doc.info.version}), the document the service serves at`,
    '`/api/v1/openapi.json`, under the default configuration. Every path is under `PUBLIC_URL/api/v1`. The guide is [api.md](api.md);',
    'what may change and how changes are announced: [compatibility.md](compatibility.md).',
    '',
    '## Operations',
    '',
  ];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) lines.push(...operationSection(doc, path, method, op));
  }
  lines.push('## Objects', '');
  for (const [name, schema] of Object.entries(doc.components.schemas)) lines.push(...schemaSection(name, schema));
  lines.push('## Headers', '', '| Header | Type | Meaning |', '|---|---|---|');
  for (const [name, header] of Object.entries(doc.components.headers)) {
    lines.push(`| ${code(name)} | ${typeOf((header.schema ?? {}) as Json)} | ${cell(String(header.description ?? ''))} |`);
  }
  lines.push('');
  lines.push(...budgetSection(config), ...errorSection());
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

function main(): void {
  const check = process.argv.includes('--check');
  const root = fileURLToPath(new URL('..', import.meta.url));
  const files: Array<[string, string]> = [
    [OPENAPI_FILE, openApiText()],
    [REFERENCE_FILE, referenceText()],
  ];
  let stale = false;
  for (const [file, text] of files) {
    const at = `${root}${file}`;
    let current: string | undefined;
    try {
      current = readFileSync(at, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (check) {
      console.error(`${file} differs from the code: run npm run api-reference`);
      stale = true;
    } else {
      writeFileSync(at, text);
      console.log(`wrote ${file}`);
    }
  }
  if (stale) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
