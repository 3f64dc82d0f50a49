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
 * Input and output schemas of the read tools, built from the contract.
 *
 * Input: the SDK validates arguments against a tool's inputSchema before the handler runs and
 * answers a failure with its own error text. The tools must answer invalid arguments exactly as
 * REST does (code BAD_REQUEST, the same message, data.issues naming each rejected argument), so
 * the schema handed to the SDK accepts any value for each argument and the handler validates
 * with the contract (read/params.ts). What clients see in tools/list is still the contract's
 * constraints: each permissive field carries the JSON Schema of its contract field as metadata,
 * which zod's JSON Schema conversion writes out in place of the permissive type.
 */

type JsonSchema = Record<string, unknown>;

/** The JSON Schema of one contract field, without the document-level `$schema` key. */
function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-7' }) as JsonSchema;
  return rest;
}

/** An argument the SDK lets through as given, advertised with the contract's JSON Schema. */
export function advertised(schema: z.ZodType) {
  return z.unknown().optional().meta(jsonSchemaOf(schema));
}

const search = searchParamsSchema.shape;

/** Page and limit arrive as strings in a query string; as tool arguments they are integers. */
const pageArgument = z
  .number()
  .int()
  .min(SEARCH_LIMITS.pageMin)
  .max(SEARCH_LIMITS.pageMax)
  .default(SEARCH_LIMITS.pageDefault)
  .describe(`page of results, ${SEARCH_LIMITS.pageMin} to ${SEARCH_LIMITS.pageMax}; default ${SEARCH_LIMITS.pageDefault}`);
const limitArgument = z
  .number()
  .int()
  .min(SEARCH_LIMITS.limitMin)
  .max(SEARCH_LIMITS.limitMax)
  .default(SEARCH_LIMITS.limitDefault)
  .describe(`products per page, ${SEARCH_LIMITS.limitMin} to ${SEARCH_LIMITS.limitMax}; default ${SEARCH_LIMITS.limitDefault}`);

/** Unknown arguments reach the handler (which names them in its error) yet are advertised as not allowed. */
export function argumentsObject(shape: Record<string, z.ZodType>) {
  return z.looseObject(shape).meta({ additionalProperties: false });
}

export const searchProductsInput = argumentsObject({
  q: advertised(search.q.unwrap().describe('words to look for in the name, tagline and description; 2 to 100 characters')),
  category: advertised(search.category.unwrap().describe('category slug, as list_categories returns it (e.g. "developer-tools")')),
  label: advertised(search.label.unwrap().describe('label slug (e.g. "new"), as found in a product\'s labels')),
  tag: advertised(search.tag.unwrap().describe('tag slug (e.g. "ai"), as found in a product\'s tags')),
  page: advertised(pageArgument),
  limit: advertised(limitArgument),
});

export const listCategoriesInput = argumentsObject({});

export const getProductInput = argumentsObject({
  slug: advertised(
    productSlugParamSchema.shape.slug.describe('the listing\'s slug, the last segment of its url (e.g. "pixel-forge"); 1 to 200 characters'),
  ),
}).meta({ required: ['slug'] });

/**
 * Output schemas: the contract envelopes. The root of a tool's output schema must be a plain
 * object schema, so each envelope is rebuilt without its registered id (which would turn the
 * root into a reference); nested Product, Category, FaqItem and Promo stay shared definitions.
 */
export const searchResultOutput = z.strictObject(searchResultSchema.shape);
export const categoryListOutput = z.strictObject(categoryListSchema.shape);
export const productOutput = z.strictObject(productSchema.shape);
