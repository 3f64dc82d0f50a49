import { createHash } from 'node:crypto';
import type { ComponentChildren } from 'preact';
import { renderPage } from './html.ts';
import type { OpenApiDocument } from './openapi.ts';

/**
 * The API reference page at /api/v1/docs, rendered on the server from the OpenAPI document:
 * every operation with its parameters, constraints and responses, every object with its
 * fields, and a small form per operation that sends the request and shows the answer. It is
 * one self-contained HTML page: no script, style or font from anywhere else, so it works
 * offline and behind strict networks. Without JavaScript it is still a complete reference.
 */
type Json = Record<string, unknown>;

/** A code span in a description: text between two backticks (\x60). */
const CODE_SPAN = /\x60([^\x60]+)\x60/;

/** Descriptions with their code spans as <code>; odd parts of the split are the code. */
function Prose({ text }: { text: string }) {
  return <>{text.split(CODE_SPAN).map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</>;
}

/** The nodes with `separator` between each two. */
function joined(nodes: ComponentChildren[], separator: string): ComponentChildren[] {
  return nodes.flatMap((node, i) => (i === 0 ? [node] : [separator, node]));
}

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

function resolve(doc: OpenApiDocument, node: unknown): Json {
  let n = node as Json;
  for (let depth = 0; typeof n?.$ref === 'string' && depth < 5; depth++) {
    const path = (n.$ref as string).replace(/^#\//, '').split('/');
    let target: unknown = doc;
    for (const part of path) target = (target as Json)[part];
    n = target as Json;
  }
  return n;
}

/** A readable type for a JSON Schema: `string (uri) or null`, `array of Product`, links to objects. */
function TypeText({ schema }: { schema: Json }): ComponentChildren {
  if (typeof schema.$ref === 'string') {
    const name = refName(schema.$ref);
    return <a href={`#schema-${name}`}>{name}</a>;
  }
  if (Array.isArray(schema.anyOf)) return <>{joined((schema.anyOf as Json[]).map((s) => <TypeText schema={s} />), ' or ')}</>;
  if (Array.isArray(schema.enum)) return <>{joined((schema.enum as unknown[]).map((v) => <code>{JSON.stringify(v)}</code>), ' | ')}</>;
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'any')];
  return (
    <>
      {joined(
        types.map((t) => {
          if (t === 'array') {
            return (
              <>
                array of <TypeText schema={(schema.items as Json) ?? {}} />
              </>
            );
          }
          if (t === 'string' && typeof schema.format === 'string') return `string (${schema.format})`;
          return t;
        }),
        ' or ',
      )}
    </>
  );
}

function constraintParts(schema: Json): ComponentChildren[] {
  const parts: ComponentChildren[] = [];
  if (schema.minLength !== undefined && schema.maxLength !== undefined) parts.push(`${schema.minLength} to ${schema.maxLength} characters`);
  else if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined && schema.maximum !== undefined) parts.push(`${schema.minimum} to ${schema.maximum}`);
  else if (schema.minimum !== undefined) parts.push(`at least ${schema.minimum}`);
  if (typeof schema.pattern === 'string') {
    parts.push(
      <>
        pattern <code>{schema.pattern}</code>
      </>,
    );
  }
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts;
}

/** The schema's limits in parentheses after a description, or nothing. */
function Constraints({ schema }: { schema: Json }) {
  const parts = constraintParts(schema);
  if (parts.length === 0) return null;
  return (
    <>
      {' '}
      <span class="muted">({joined(parts, '; ')})</span>
    </>
  );
}

function SchemaSection({ name, schema }: { name: string; schema: Json }) {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return (
    <section id={`schema-${name}`}>
      <h3>{name}</h3>
      <table>
        <thead>
          <tr>
            <th>Field</th>
            <th>Type</th>
            <th>Present</th>
            <th>Notes</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(props).map(([field, s]) => (
            <tr>
              <td data-label="Field">
                <code>{field}</code>
              </td>
              <td data-label="Type">
                <TypeText schema={s} />
              </td>
              <td data-label="Present">{required.has(field) ? 'always' : 'optional'}</td>
              <td data-label="Notes">
                {typeof s.description === 'string' && <Prose text={s.description} />}
                <Constraints schema={s} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {schema.additionalProperties === false && <p class="muted">No field beyond these.</p>}
    </section>
  );
}

/** One input of an operation's Try-it form. */
function TryInput({ param }: { param: Json }) {
  const s = (param.schema ?? {}) as Json;
  const name = String(param.name);
  return (
    <label>
      {name}{' '}
      <input
        name={name}
        data-in={String(param.in)}
        type={s.type === 'integer' ? 'number' : 'text'}
        min={s.minimum as number | undefined}
        max={s.maximum as number | undefined}
        maxLength={s.maxLength as number | undefined}
        placeholder={s.default !== undefined ? String(s.default) : undefined}
        required={param.required === true}
      />
    </label>
  );
}

/** A response body: a JSON object, lines of objects (NDJSON), or none. */
function BodyText({ content }: { content: Record<string, Json> | undefined }) {
  const json = content?.['application/json'];
  if (json) return <TypeText schema={json.schema as Json} />;
  const lines = content?.['application/x-ndjson'];
  if (lines) {
    return (
      <>
        <code>application/x-ndjson</code>: one <TypeText schema={lines['x-item-schema'] as Json} /> per line
      </>
    );
  }
  return <>no body</>;
}

function OperationSection(props: { doc: OpenApiDocument; path: string; method: string; op: Json; basePath: string }) {
  const { doc, path, method, op, basePath } = props;
  const id = String(op.operationId);
  const params = ((op.parameters as Json[]) ?? []).map((p) => resolve(doc, p));
  const inputs = params.filter((p) => p.in === 'query' || p.in === 'path');
  return (
    <section class="op" id={`op-${id}`}>
      <h3>
        <span class="method">{method.toUpperCase()}</span> <code>{path}</code> <span class="muted">{id}</span>
      </h3>
      <p>
        <strong>
          <Prose text={String(op.summary ?? '')} />.
        </strong>{' '}
        <Prose text={String(op.description ?? '')} />
      </p>
      {params.length > 0 && (
        <>
          <h4>Parameters</h4>
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>In</th>
                <th>Type</th>
                <th>Required</th>
                <th>Notes</th>
              </tr>
            </thead>
            <tbody>
              {params.map((p) => (
                <tr>
                  <td data-label="Name">
                    <code>{String(p.name)}</code>
                  </td>
                  <td data-label="In">{String(p.in)}</td>
                  <td data-label="Type">
                    <TypeText schema={(p.schema ?? {}) as Json} />
                  </td>
                  <td data-label="Required">{p.required ? 'yes' : 'no'}</td>
                  <td data-label="Notes">
                    <Prose text={String(p.description ?? '')} />
                    <Constraints schema={(p.schema ?? {}) as Json} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <h4>Responses</h4>
      <table>
        <thead>
          <tr>
            <th>Status</th>
            <th>Meaning</th>
            <th>Body</th>
            <th>Headers</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries((op.responses ?? {}) as Record<string, Json>).map(([status, r]) => {
            const resp = resolve(doc, r);
            const headers = Object.keys((resp.headers as Json | undefined) ?? {}).map((h) => <code>{h}</code>);
            return (
              <tr>
                <td data-label="Status">{status}</td>
                <td data-label="Meaning">
                  <Prose text={String(resp.description ?? '')} />
                </td>
                <td data-label="Body">
                  <BodyText content={resp.content as Record<string, Json> | undefined} />
                </td>
                <td data-label="Headers">{joined(headers, ', ')}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {/* A path with a {parameter} has no plain action: only the script can fill it in. */}
      <form class="try" method="get" action={path.includes('{') ? undefined : basePath + path} data-path={basePath + path}>
        <h4>Try it</h4>
        {joined(
          inputs.map((p) => <TryInput param={p} />),
          ' ',
        )}{' '}
        <button type="submit">Send</button>
        <pre class="out" hidden />
      </form>
    </section>
  );
}

/** Sends a form's request with fetch and prints status, headers and the formatted body. */
const SCRIPT = `
for (const form of document.querySelectorAll('form.try')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let path = form.dataset.path;
    const query = new URLSearchParams();
    for (const input of form.querySelectorAll('input')) {
      if (input.dataset.in === 'path') path = path.replace('{' + input.name + '}', encodeURIComponent(input.value));
      else if (input.value !== '') query.set(input.name, input.value);
    }
    const qs = query.toString();
    const url = path + (qs ? '?' + qs : '');
    const out = form.querySelector('.out');
    out.hidden = false;
    out.textContent = 'GET ' + url + ' ...';
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' } });
      // The export is the whole catalog: show its beginning, not hundreds of megabytes.
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let cut = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (text.length > 200000) { cut = true; reader.cancel(); break; }
      }
      let body = text;
      try { body = JSON.stringify(JSON.parse(text), null, 2); } catch {}
      if (cut) body = text.slice(0, 200000) + '\\n… (the rest is not shown)';
      const headers = [...res.headers].map(([k, v]) => k + ': ' + v).join('\\n');
      out.textContent = 'GET ' + url + '\\n' + res.status + ' ' + res.statusText + '\\n' + headers + '\\n\\n' + body;
    } catch (err) {
      out.textContent = 'GET ' + url + '\\nrequest failed: ' + err;
    }
  });
}
`;

/**
 * On a narrow screen each table row becomes a block of labelled lines (the labels are the cells'
 * data-label), so the page never scrolls sideways; the headings stay for screen readers.
 */
const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1d232b}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d6dbe1;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f5f8}.muted{color:#5b6573}.method{background:#1f6feb;color:#fff;border-radius:4px;padding:0 .4rem}
section.op{border-top:2px solid #d6dbe1;margin-top:1.5rem}nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}
form.try{background:#f7f8fa;padding:.5rem 1rem;border-radius:6px}form.try label{margin-right:.8rem;white-space:nowrap}
form.try input{width:9rem}pre.out{background:#0f1419;color:#e6e6e6;padding:.8rem;overflow:auto;max-height:30rem;white-space:pre-wrap}
@media (max-width:40rem){body{padding:1rem}code{overflow-wrap:anywhere}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}table,tbody,tr,td{display:block}
tr{border:1px solid #d6dbe1;border-radius:4px;margin-bottom:.5rem;padding:.3rem 0}td{border:0;padding:.1rem .6rem}td:empty{display:none}
td:first-child{font-weight:600}td+td::before{content:attr(data-label) ": ";color:#5b6573}}
`;

function DocsDocument({ doc, basePath, serverUrl }: { doc: OpenApiDocument; basePath: string; serverUrl: string }) {
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>
          {doc.info.title} {doc.info.version}: reference
        </title>
        {/* The page's own style and script are inline, allowed by their hashes (see below). */}
        <style dangerouslySetInnerHTML={{ __html: STYLE }} />
        {/* An empty icon (img-src allows data:), or browsers ask for /favicon.ico, which is a 404. */}
        <link rel="icon" href="data:," />
      </head>
      <body>
        <header>
          <h1>
            {doc.info.title} <span class="muted">{doc.info.version}</span>
          </h1>
          {doc.info.description.split('\n\n').map((para) =>
            // A paragraph "## Title" is a section heading (the description's "Higher limits").
            para.startsWith('## ') ? (
              <h2 id={para.slice(3).toLowerCase().replace(/[^a-z0-9]+/g, '-')}>{para.slice(3)}</h2>
            ) : (
              <p>
                <Prose text={para} />
              </p>
            ),
          )}
          <p>
            Base URL: <code>{serverUrl}</code>. Machine-readable description (OpenAPI {doc.openapi}):{' '}
            <a href={`${basePath}/openapi.json`}>openapi.json</a>.
          </p>
          <p>
            Errors are an object with <code>code</code> and <code>message</code>; a 400 adds the rejected parameters under{' '}
            <code>data.issues</code> (see <a href="#schema-Error">Error</a>).
          </p>
          <nav>
            {operations.map(({ op }) => (
              <a href={`#op-${String(op.operationId)}`}>{String(op.operationId)}</a>
            ))}
            <a href="#schemas">Objects</a>
          </nav>
        </header>
        <main>
          <h2>Operations</h2>
          {operations.map(({ path, method, op }) => (
            <OperationSection doc={doc} path={path} method={method} op={op} basePath={basePath} />
          ))}
          <h2 id="schemas">Objects</h2>
          {Object.entries(doc.components.schemas).map(([name, schema]) => (
            <SchemaSection name={name} schema={schema} />
          ))}
        </main>
        <script dangerouslySetInnerHTML={{ __html: SCRIPT }} />
      </body>
    </html>
  );
}

export interface DocsPage {
  html: string;
  /** Content-Security-Policy allowing exactly this page's inline script and style. */
  contentSecurityPolicy: string;
}

export function renderDocsPage(doc: OpenApiDocument): DocsPage {
  const serverUrl = doc.servers[0]?.url ?? '/api/v1';
  // Requests from the page go to this origin's API path, whatever host serves the page.
  const basePath = new URL(serverUrl, 'http://localhost').pathname.replace(/\/$/, '');
  const html = renderPage(<DocsDocument doc={doc} basePath={basePath} serverUrl={serverUrl} />);
  const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src ${hash(SCRIPT)}`,
    `style-src ${hash(STYLE)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, contentSecurityPolicy };
}
