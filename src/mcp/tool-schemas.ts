import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  categoryListSchema,
  productSchema,
  productSlugParamSchema,
  SEARCH_LIMITS,
  searchParamsSchema,
  searchResultSchema,
} from '../contract/schemas.ts';

/**
 * The tools' schemas: what `tools/list` advertises, and what the SDK checks a call against.
 *
 * Each is two things: a validator (zod) and the JSON Schema clients see, kept apart on purpose.
 * - Input: the tools must refuse bad arguments exactly as REST does (code BAD_REQUEST, the same
 *   message, `data.issues` naming each rejected argument), so the SDK's validator lets any
 *   object through and each handler validates with the contract (read/params.ts,
 *   catalog/listings/maker-input.ts). Clients still see the contract's constraints.
 * - Output: the validator is the contract envelope, strict; clients see it as compact JSON
 *   Schema (2020-12, the revision's default dialect, so no `$schema`).
 *
 * Compact, because `tools/list` goes into every conversation an assistant has with the catalog:
 * no regular expressions where a `format` says the same (date-time, date, uuid), no
 * "maximum: 2^53 − 1", shared definitions under `$defs`. The bench counts its bytes and tokens
 * (docs/performance.md).
 */

type JsonSchema = Record<string, unknown>;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * `anyOf: [X, {type: null}]` of a plain typed X, written as X with `null` among its types (and
 * its enum): the same schema, shorter.
 */
function nullableInline(node: JsonSchema): JsonSchema {
  const anyOf = node.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return node;
  const [first, second] = anyOf as JsonSchema[];
  if (second?.type !== 'null' || Object.keys(second).length !== 1 || typeof first?.type !== 'string' || '$ref' in first) return node;
  const { anyOf: _anyOf, ...rest } = node;
  const inlined: JsonSchema = { ...first, type: [first.type, 'null'], ...rest };
  if (Array.isArray(first.enum)) inlined.enum = [...(first.enum as unknown[]), null];
  return inlined;
}

/** A JSON Schema without what says nothing to a client: see the module's comment. */
function compactJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: JsonSchema = {};
  const node = nullableInline(schema as JsonSchema);
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    if (key === 'pattern' && typeof node.format === 'string') continue;
    if (key === 'maximum' && value === MAX_SAFE) continue;
    if (key === 'minimum' && value === -MAX_SAFE) continue;
    // A definition's title repeats its name under $defs.
    if (key === 'title' && typeof value === 'string') continue;
    out[key] = key === 'properties' || key === '$defs' ? mapValues(value as JsonSchema) : compactJsonSchema(value);
  }
  return out;
}

function mapValues(record: JsonSchema): JsonSchema {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, compactJsonSchema(v)]));
}

/** A zod schema's JSON Schema, compacted. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return compactJsonSchema(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' })) as JsonSchema;
}

export type ToolSchema<T> = StandardSchemaWithJSON<unknown, T>;

/** A schema the SDK validates with `validator` and advertises as `json`. */
function toolSchema<T>(validator: z.ZodType<T>, json: JsonSchema): ToolSchema<T> {
  const std = validator['~standard'];
  return {
    '~standard': {
      version: 1,
      vendor: 'catalog',
      validate: (value) => std.validate(value) as ReturnType<ToolSchema<T>['~standard']['validate']>,
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** Any object of arguments reaches the handler, which validates it; clients see `advertised`. */
const anyArguments = z.record(z.string(), z.unknown());

/** Tool arguments: let through to the handler, advertised as the object schema of `shape` (no other keys). */
export function argumentsSchema(shape: Record<string, z.ZodType>, required: readonly string[] = []): ToolSchema<Record<string, unknown>> {
  const json = jsonSchemaOf(z.object(shape), 'input');
  delete json.required;
  return toolSchema(anyArguments, { ...json, ...(required.length > 0 && { required: [...required] }), additionalProperties: false });
}

/**
 * A tool's output, advertised compactly as `schema`: validated by the SDK as `schema`, or, for
 * the read tools, let through to be checked by the tool itself (read-tools.ts: successResult),
 * so both roads of a read tool answer a failed check alike.
 */
function outputSchema<T>(schema: z.ZodType<T>, checkedBy: 'sdk' | 'tool' = 'sdk'): ToolSchema<unknown> {
  return toolSchema(checkedBy === 'sdk' ? schema : z.unknown(), withoutDescriptions(jsonSchemaOf(schema, 'output')) as JsonSchema);
}

/**
 * An output schema says what the fields are; what they mean is in the tool's description and
 * in the text the model reads, so the contract's field descriptions (the OpenAPI document's) are
 * left out here.
 */
function withoutDescriptions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    if (key === 'description' && typeof value === 'string') continue;
    out[key] = key === 'properties' || key === '$defs' ? Object.fromEntries(Object.entries(value as JsonSchema).map(([k, v]) => [k, withoutDescriptions(v)])) : withoutDescriptions(value);
  }
  return out;
}

const search = searchParamsSchema.shape;

/** Page and limit arrive as strings in a query string; as tool arguments they are integers. */
const pageArgument = z.number().int().min(SEARCH_LIMITS.pageMin).max(SEARCH_LIMITS.pageMax).default(SEARCH_LIMITS.pageDefault).describe('page of results');
const limitArgument = z.number().int().min(SEARCH_LIMITS.limitMin).max(SEARCH_LIMITS.limitMax).default(SEARCH_LIMITS.limitDefault).describe('listings per page');

export const searchProductsInput = argumentsSchema({
  q: search.q.unwrap().describe('words in the name, tagline or description'),
  category: search.category.unwrap().describe('category slug (list_categories)'),
  label: search.label.unwrap().describe('label slug, e.g. "new"'),
  tag: search.tag.unwrap().describe('tag slug, e.g. "ai"'),
  page: pageArgument,
  limit: limitArgument,
});

export const listCategoriesInput = argumentsSchema({});

export const getProductInput = argumentsSchema({ slug: productSlugParamSchema.shape.slug.describe('the listing\'s slug, e.g. "pixel-forge"') }, ['slug']);

/**
 * Output schemas: the contract envelopes. A tool's output schema is an object at its root, so
 * each envelope is rebuilt without its registered id (which would turn the root into a
 * reference); nested Product, Category, FaqItem and Promo stay shared definitions.
 */
export const searchResultContract = z.strictObject(searchResultSchema.shape);
export const categoryListContract = z.strictObject(categoryListSchema.shape);
export const productContract = z.strictObject(productSchema.shape);
export const searchResultOutput = outputSchema(searchResultContract, 'tool');
export const categoryListOutput = outputSchema(categoryListContract, 'tool');
export const productOutput = outputSchema(productContract, 'tool');
