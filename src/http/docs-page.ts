import { createHash } from 'node:crypto';
import type { OpenApiDocument } from './openapi.ts';

/**
 * The API reference page at /api/v1/docs, rendered on the server from the OpenAPI document:
 * every operation with its parameters, constraints and responses, every object with its
 * fields, and a small form per operation that sends the request and shows the answer. It is
 * one self-contained HTML page: no script, style or font from anywhere else, so it works
 * offline and behind strict networks. Without JavaScript it is still a complete reference.
 */
type Json = Record<string, unknown>;

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Inline code spans (`x`) in descriptions, after escaping. */
const prose = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

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
function typeText(schema: Json): string {
  if (typeof schema.$ref === 'string') {
    const name = refName(schema.$ref);
    return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
  }
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeText).join(' or ');
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(' | ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'any')];
  return types
    .map((t) => {
      if (t === 'array') return `array of ${typeText((schema.items as Json) ?? {})}`;
      if (t === 'string' && typeof schema.format === 'string') return `string (${escapeHtml(schema.format)})`;
      return escapeHtml(t);
    })
    .join(' or ');
}

function constraints(schema: Json): string {
  const parts: string[] = [];
  if (schema.minLength !== undefined && schema.maxLength !== undefined) parts.push(`${schema.minLength} to ${schema.maxLength} characters`);
  else if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined && schema.maximum !== undefined) parts.push(`${schema.minimum} to ${schema.maximum}`);
  else if (schema.minimum !== undefined) parts.push(`at least ${schema.minimum}`);
  if (typeof schema.pattern === 'string') parts.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if (schema.default !== undefined) parts.push(`default ${escapeHtml(JSON.stringify(schema.default))}`);
  return parts.join('; ');
}

function schemaSection(name: string, schema: Json): string {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(props)
    .map(([field, s]) => {
      const description = typeof s.description === 'string' ? prose(s.description) : '';
      const limits = constraints(s);
      return `<tr><td><code>${escapeHtml(field)}</code></td><td>${typeText(s)}</td><td>${required.has(field) ? 'always' : 'optional'}</td><td>${description}${limits ? ` <span class="muted">(${limits})</span>` : ''}</td></tr>`;
    })
    .join('');
  return `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3>
<table><thead><tr><th>Field</th><th>Type</th><th>Present</th><th>Notes</th></tr></thead><tbody>${rows}</tbody></table>
${schema.additionalProperties === false ? '<p class="muted">No field beyond these.</p>' : ''}</section>`;
}

function operationSection(doc: OpenApiDocument, path: string, method: string, op: Json, basePath: string): string {
  const id = String(op.operationId);
  const params = ((op.parameters as Json[]) ?? []).map((p) => resolve(doc, p));
  const paramRows = params
    .map((p) => {
      const s = (p.schema ?? {}) as Json;
      return `<tr><td><code>${escapeHtml(String(p.name))}</code></td><td>${escapeHtml(String(p.in))}</td><td>${typeText(s)}</td><td>${p.required ? 'yes' : 'no'}</td><td>${prose(String(p.description ?? ''))}${constraints(s) ? ` <span class="muted">(${constraints(s)})</span>` : ''}</td></tr>`;
    })
    .join('');
  const responses = Object.entries((op.responses ?? {}) as Record<string, Json>)
    .map(([status, r]) => {
      const resp = resolve(doc, r);
      const content = (resp.content as Record<string, { schema: Json }> | undefined)?.['application/json'];
      const hdrs = Object.keys((resp.headers as Json | undefined) ?? {}).map((h) => `<code>${escapeHtml(h)}</code>`).join(', ');
      return `<tr><td>${escapeHtml(status)}</td><td>${prose(String(resp.description ?? ''))}</td><td>${content ? typeText(content.schema) : 'no body'}</td><td>${hdrs}</td></tr>`;
    })
    .join('');
  const inputs = params
    .filter((p) => p.in === 'query' || p.in === 'path')
    .map((p) => {
      const s = (p.schema ?? {}) as Json;
      const type = s.type === 'integer' ? 'number' : 'text';
      const attrs = [
        s.minimum !== undefined ? `min="${s.minimum}"` : '',
        s.maximum !== undefined ? `max="${s.maximum}"` : '',
        s.maxLength !== undefined ? `maxlength="${s.maxLength}"` : '',
        s.default !== undefined ? `placeholder="${escapeHtml(String(s.default))}"` : '',
        p.required ? 'required' : '',
      ]
        .filter(Boolean)
        .join(' ');
      return `<label>${escapeHtml(String(p.name))} <input name="${escapeHtml(String(p.name))}" data-in="${escapeHtml(String(p.in))}" type="${type}" ${attrs}></label>`;
    })
    .join(' ');
  return `<section class="op" id="op-${escapeHtml(id)}">
<h3><span class="method">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code> <span class="muted">${escapeHtml(id)}</span></h3>
<p><strong>${prose(String(op.summary ?? ''))}.</strong> ${prose(String(op.description ?? ''))}</p>
${paramRows ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead><tbody>${paramRows}</tbody></table>` : ''}
<h4>Responses</h4><table><thead><tr><th>Status</th><th>Meaning</th><th>Body</th><th>Headers</th></tr></thead><tbody>${responses}</tbody></table>
<form class="try" method="get"${path.includes('{') ? '' : ` action="${escapeHtml(basePath + path)}"`} data-path="${escapeHtml(basePath + path)}">
<h4>Try it</h4>${inputs} <button type="submit">Send</button>
<pre class="out" hidden></pre></form>
</section>`;
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
      const text = await res.text();
      let body = text;
      try { body = JSON.stringify(JSON.parse(text), null, 2); } catch {}
      const headers = [...res.headers].map(([k, v]) => k + ': ' + v).join('\\n');
      out.textContent = 'GET ' + url + '\\n' + res.status + ' ' + res.statusText + '\\n' + headers + '\\n\\n' + body;
    } catch (err) {
      out.textContent = 'GET ' + url + '\\nrequest failed: ' + err;
    }
  });
}
`;

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1d232b}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d6dbe1;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f5f8}.muted{color:#5b6573}.method{background:#1f6feb;color:#fff;border-radius:4px;padding:0 .4rem}
section.op{border-top:2px solid #d6dbe1;margin-top:1.5rem}nav a{margin-right:1rem}
form.try{background:#f7f8fa;padding:.5rem 1rem;border-radius:6px}form.try label{margin-right:.8rem;white-space:nowrap}
form.try input{width:9rem}pre.out{background:#0f1419;color:#e6e6e6;padding:.8rem;overflow:auto;max-height:30rem;white-space:pre-wrap}
`;

export interface DocsPage {
  html: string;
  /** Content-Security-Policy allowing exactly this page's inline script and style. */
  contentSecurityPolicy: string;
}

export function renderDocsPage(doc: OpenApiDocument): DocsPage {
  const serverUrl = doc.servers[0]?.url ?? '/api/v1';
  // Requests from the page go to this origin's API path, whatever host serves the page.
  const basePath = new URL(serverUrl, 'http://localhost').pathname.replace(/\/$/, '');
  const ops = Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => operationSection(doc, path, method, op, basePath)))
    .join('\n');
  const schemas = Object.entries(doc.components.schemas)
    .map(([name, schema]) => schemaSection(name, schema))
    .join('\n');
  const nav = Object.values(doc.paths)
    .flatMap((methods) => Object.values(methods))
    .map((op) => `<a href="#op-${escapeHtml(String(op.operationId))}">${escapeHtml(String(op.operationId))}</a>`)
    .join('');
  const description = doc.info.description
    .split('\n\n')
    .map((para) => `<p>${prose(para)}</p>`)
    .join('');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(doc.info.title)} ${escapeHtml(doc.info.version)}: reference</title>
<style>${STYLE}</style></head>
<body>
<header><h1>${escapeHtml(doc.info.title)} <span class="muted">${escapeHtml(doc.info.version)}</span></h1>
${description}
<p>Base URL: <code>${escapeHtml(serverUrl)}</code>. Machine-readable description (OpenAPI ${escapeHtml(doc.openapi)}): <a href="${escapeHtml(basePath)}/openapi.json">openapi.json</a>.</p>
<p>Errors are an object with <code>code</code> and <code>message</code>; a 400 adds the rejected parameters under <code>data.issues</code> (see <a href="#schema-Error">Error</a>).</p>
<nav>${nav}<a href="#schemas">Objects</a></nav></header>
<main><h2>Operations</h2>
${ops}
<h2 id="schemas">Objects</h2>
${schemas}
</main>
<script>${SCRIPT}</script>
</body></html>`;
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
