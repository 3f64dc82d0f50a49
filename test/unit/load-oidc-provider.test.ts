import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * oidc-provider's "Unsupported runtime" warning, on the Node.js running the tests. The child
 * first makes its runtime look like a release that is not LTS (process.release.lts unset, as on
 * a Current release), so the library warns on every runtime; the service's loader may hide that
 * line on Node.js 20 only.
 */
const WARNING = 'oidc-provider WARNING: Unsupported runtime';
const MAJOR = Number(process.versions.node.split('.')[0]);

async function stderrOfLoading(): Promise<string> {
  const code = [
    `Object.defineProperty(process.release, 'lts', { value: undefined, configurable: true });`,
    `const { loadOidcProvider } = await import('./src/auth/load-oidc-provider.ts');`,
    `const { Provider } = await loadOidcProvider();`,
    `if (typeof Provider !== 'function') throw new Error('no Provider');`,
  ].join('\n');
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code]);
  return stderr;
}

describe('loading oidc-provider', () => {
  it.runIf(MAJOR >= 22)(`shows the library's runtime warning on Node.js 22 and later (here ${process.version})`, async () => {
    expect(await stderrOfLoading()).toContain(WARNING);
  });

  it.runIf(MAJOR < 22)(`keeps the runtime warning out of the log on Node.js 20 (here ${process.version}), and nothing else`, async () => {
    expect(await stderrOfLoading()).toBe('');
  });
});
