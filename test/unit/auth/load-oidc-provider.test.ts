import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * oidc-provider's "Unsupported runtime" warning, on the Node.js running the tests. The child
 * first makes its runtime look like a release that is not LTS (process.release.lts unset, as on
 * a Current release), so the library warns on every runtime. The service's loader hands the
 * library's warnings to the service's log (here: lines on stdout), never to stderr, and drops
 * that one on Node.js 20 only.
 */
const WARNING = 'oidc-provider WARNING: Unsupported runtime. Use Node.js v22.x LTS, or a later LTS release.';
const MAJOR = Number(process.versions.node.split('.')[0]);

async function loadInChild(): Promise<{ logged: string; stderr: string }> {
  const code = [
    `Object.defineProperty(process.release, 'lts', { value: undefined, configurable: true });`,
    `const { loadOidcProvider } = await import('./src/auth/load-oidc-provider.ts');`,
    `const { Provider } = await loadOidcProvider({ warn: (message) => console.log('log.warn: ' + message) });`,
    `if (typeof Provider !== 'function') throw new Error('no Provider');`,
  ].join('\n');
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code]);
  return { logged: stdout, stderr };
}

describe('loading oidc-provider', () => {
  it.runIf(MAJOR >= 22)(`logs the library's runtime warning as a warning on Node.js 22 and later (here ${process.version})`, async () => {
    expect(await loadInChild()).toEqual({ logged: `log.warn: ${WARNING}\n`, stderr: '' });
  });

  it.runIf(MAJOR < 22)(`drops the runtime warning on Node.js 20 (here ${process.version}), and prints nothing else`, async () => {
    expect(await loadInChild()).toEqual({ logged: '', stderr: '' });
  });
});
