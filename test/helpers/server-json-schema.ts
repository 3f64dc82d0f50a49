import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { z } from 'zod';
import { projectPath } from '../../src/util/project-file.ts';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is the module itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * The MCP registry's server.json schema of 2025-12-11 is another project's file, so the
 * repository does not carry it: it is read from MCP_SERVER_SCHEMA, or from the schemas folder
 * beside the repository (../shared/schemas/server.schema.2025-12-11.json), where it is kept with
 * its source and license. Without it the documents are checked against the registry's rules for
 * what `catalog mcp server-json` writes, as its documentation states them (REGISTRY_RULES
 * below), and the check against the schema itself says it was left out, in one line.
 */
const SCHEMA_FILE = process.env.MCP_SERVER_SCHEMA ?? path.join(path.dirname(projectPath('package.json')), '..', 'shared', 'schemas', 'server.schema.2025-12-11.json');

export const SERVER_SCHEMA: { $id: string; $schema: string } | undefined = existsSync(SCHEMA_FILE)
  ? (JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as { $id: string; $schema: string })
  : undefined;

/**
 * The registry's rules for the members `catalog mcp server-json` writes (the registry's
 * server.json reference): a reverse-DNS namespace and a name, at most 200 characters; a title and
 * a description of at most 100; a version that is no range; icons by URL of a known image type
 * with WxH or `any` sizes; remotes of a known transport type.
 */
const REGISTRY_RULES = z.strictObject({
  $schema: z.url(),
  name: z.string().min(3).max(200).regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/),
  title: z.string().min(1).max(100),
  description: z.string().min(1).max(100),
  version: z.string().min(1).max(255).refine((v) => !/^[\^~><=*]|\s(-|\|\|)\s|^latest$/.test(v), 'a version, not a range'),
  websiteUrl: z.url(),
  icons: z.array(
    z.strictObject({
      src: z.url({ protocol: /^https?$/ }).max(255),
      mimeType: z.enum(['image/png', 'image/jpeg', 'image/jpg', 'image/svg+xml', 'image/webp']),
      sizes: z.array(z.string().regex(/^(\d+x\d+|any)$/)),
    }),
  ),
  remotes: z.array(z.strictObject({ type: z.enum(['streamable-http', 'sse']), url: z.url({ protocol: /^https?$/ }) })).min(1),
});

/**
 * A validator of server.json documents: the registry's schema when it is at hand (JSON Schema
 * draft-07, formats checked; its `example` annotations declared as keywords that check nothing,
 * and `strictTypes`/`strictRequired` off, which refuse constructs valid in draft-07 that the
 * schema uses), and the rules above in every case. Returns the problems found, none when valid.
 */
export function serverJsonValidator(): (document: unknown) => string[] {
  let schema: ((document: unknown) => string[]) | undefined;
  if (SERVER_SCHEMA) {
    const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
    ajv.addKeyword({ keyword: 'example' });
    addFormats(ajv);
    const validate = ajv.compile(SERVER_SCHEMA);
    schema = (document) => (validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
  }
  return (document) => {
    const rules = REGISTRY_RULES.safeParse(document);
    return [...(schema?.(document) ?? []), ...(rules.success ? [] : rules.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))];
  };
}
