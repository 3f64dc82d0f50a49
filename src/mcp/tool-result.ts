import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CatalogError } from '../contract/errors.ts';

/**
 * Tool results. A success carries the REST body twice: parsed, as structuredContent (checked
 * against the tool's output schema), and verbatim, as a text block for clients that read only
 * text. A failure is a tool error (isError: true) whose only text block is the REST error
 * object as JSON, `{"code","message"}` plus `data.issues` for rejected arguments, so a client
 * can tell BAD_REQUEST, NOT_FOUND and TOO_MANY_REQUESTS apart exactly as over REST. A failure
 * has no structuredContent: it would not match the success output schema.
 */
export function bodyResult(body: string): CallToolResult {
  return {
    structuredContent: JSON.parse(body) as Record<string, unknown>,
    content: [{ type: 'text', text: body }],
  };
}

export function errorResult(error: CatalogError): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(error.toBody()) }],
  };
}
