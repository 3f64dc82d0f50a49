// Loaded with `node --import` by a test: writes to the file named by MODULE_PROBE_FILE every
// module the process loads whose URL contains MODULE_PROBE_MATCH, whether imported (a resolve
// hook, in the loaders' thread) or required (the CommonJS cache, read at exit).
import { appendFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';

const file = process.env.MODULE_PROBE_FILE;
const match = process.env.MODULE_PROBE_MATCH;
if (file && match) {
  const hooks = `
    import { appendFileSync } from 'node:fs';
    let file, match;
    export function initialize(data) { file = data.file; match = data.match; }
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      if (result.url.includes(match)) appendFileSync(file, 'import ' + result.url + '\\n');
      return result;
    }`;
  module.register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { file, match } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    for (const id of Object.keys(require.cache)) if (id.includes(match)) appendFileSync(file, `require ${id}\n`);
  });
}
