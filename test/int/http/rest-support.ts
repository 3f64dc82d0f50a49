import { randomInt } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenApiDocument } from '../../../src/http/openapi.ts';

/** Shared by the REST test files: client addresses, formats, and validation against the OpenAPI document. */

// ajv-formats is CommonJS with a default export; under NodeNext the callable is the module itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A client address of its own for each caller, so per-IP budgets never collide between tests or runs. */
export function uniqueIp(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** ISO 8601 date-time in UTC, ending in Z. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;
export const YYYY_MM_DD = /^\d{4}-\d{2}-\d{2}$/;

export const PRODUCT_FIELDS = [
  'id', 'slug', 'name', 'punchline', 'description', 'url', 'website', 'logo', 'cover', 'category', 'labels', 'tags',
  'product_type', 'pricing_model', 'social', 'featured', 'listed_at', 'highlights', 'ideal_for', 'faq', 'promo',
].sort();

export type SchemaName = 'Product' | 'Category' | 'SearchResult' | 'CategoryList' | 'Change' | 'ChangePage' | 'Error' | 'FaqItem' | 'Promo';

/**
 * Validators for the document's component schemas (JSON Schema draft 2020-12 with formats), so
 * actual answers are checked against what the API publishes, not against a copy.
 */
export function responseValidators(doc: OpenApiDocument): (name: SchemaName) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const id = 'https://catalog.test/openapi.json';
  ajv.addSchema({ $id: id, components: doc.components });
  return (name) => {
    const validate = ajv.getSchema(`${id}#/components/schemas/${name}`);
    if (!validate) throw new Error(`no schema ${name} in the OpenAPI document`);
    return validate;
  };
}

/** The schema a documented response carries, resolving $refs of the document. */
export function documentedResponseSchema(doc: OpenApiDocument, path: string, status: string): string | undefined {
  const op = doc.paths[path]?.get as { responses: Record<string, { $ref?: string; content?: unknown }> } | undefined;
  let resp: unknown = op?.responses[status];
  while (resp && typeof (resp as { $ref?: string }).$ref === 'string') {
    const parts = (resp as { $ref: string }).$ref.replace(/^#\//, '').split('/');
    resp = parts.reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], doc);
  }
  const schema = (resp as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined)?.content?.['application/json']?.schema;
  return schema?.$ref?.split('/').pop();
}
