import { specTypeSchemas, type CallToolResult, type ContentBlock } from '@modelcontextprotocol/server';
import type { CatalogError } from '../contract/errors.ts';
import { resultMeta, type Era } from './protocol.ts';

/**
 * Tool results, shaped for the request's era. In the modern era (2026-07-28) a result carries
 * `resultType: "complete"` and the server's identity in `_meta` as the SDK would add them, so the
 * SDK sends it unchanged and the direct path (direct-read-calls.ts) serializes the very same
 * object; the legacy era has neither.
 *
 * A success carries the structured result (for the read tools, the REST body) and content for
 * the model: the read tools' text (model-text.ts) and links, the maker tools' JSON. A failure is
 * a tool error (isError: true) whose only text block is the REST error object as JSON,
 * `{"code","message"}` plus `data.issues` for rejected arguments, so a client can tell
 * BAD_REQUEST, NOT_FOUND and TOO_MANY_REQUESTS apart exactly as over REST. A failure has no
 * structuredContent: it would not match the success output schema.
 */
function eraResult(result: CallToolResult, era: Era): CallToolResult {
  return normalized(era === 'modern' ? ({ ...result, resultType: 'complete', ...resultMeta(era) } as CallToolResult) : result);
}

/**
 * A result as the SDK sends it: the SDK checks a tool's result against the protocol's schema and
 * sends what that check returns, with its members in the schema's order; the same check here
 * makes the result the fast path writes the very one (test/unit/mcp/mcp-direct-results.test.ts).
 */
function normalized(result: CallToolResult): CallToolResult {
  const checked = specTypeSchemas.CallToolResult['~standard'].validate(result);
  return 'value' in checked && checked.value !== undefined ? (checked.value as CallToolResult) : result;
}

export function structuredResult(structuredContent: Record<string, unknown>, content: ContentBlock[], era: Era): CallToolResult {
  return eraResult({ content, structuredContent }, era);
}

/** The maker tools' results: the structured answer, and the same JSON as text. */
export function jsonResult(body: Record<string, unknown>, era: Era): CallToolResult {
  return structuredResult(body, [{ type: 'text', text: JSON.stringify(body) }], era);
}

export function errorResult(error: CatalogError, era: Era): CallToolResult {
  return eraResult({ content: [{ type: 'text', text: JSON.stringify(error.toBody()) }], isError: true }, era);
}
