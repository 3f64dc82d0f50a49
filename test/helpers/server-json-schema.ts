import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { projectPath } from '../../src/util/project-file.ts';

// ajv-formats is CommonJS with a default export; under NodeNext the callable is the module itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** The MCP registry's server.json schema of 2025-12-11, as committed (docs/schemas/README.md). */
export const SERVER_SCHEMA = JSON.parse(readFileSync(projectPath('docs/schemas/server.schema.2025-12-11.json'), 'utf8')) as { $id: string; $schema: string };

/**
 * A validator of server.json documents against that schema: JSON Schema draft-07 (the schema's
 * `$schema`), formats checked. Its `example` annotations are OpenAPI's, not JSON Schema's: they
 * are declared as keywords that check nothing. ajv's strict mode otherwise stays on, but for
 * `strictTypes` and `strictRequired`, which refuse constructs valid in draft-07 that the schema
 * uses (`required` in an `anyOf` branch naming properties defined beside it).
 */
export function serverJsonValidator(): (document: unknown) => ErrorObject[] {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  ajv.addKeyword({ keyword: 'example' });
  addFormats(ajv);
  const validate = ajv.compile(SERVER_SCHEMA);
  return (document) => (validate(document) ? [] : [...(validate.errors ?? [])]);
}
