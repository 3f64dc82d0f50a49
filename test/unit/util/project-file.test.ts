import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../../src/util/project-file.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('projectPath', () => {
  it("finds the project's files, not a folder's own file of the same name on the way up", () => {
    expect(existsSync(path.join(ROOT, 'src/util/README.md'))).toBe(true);
    expect(projectPath('README.md')).toBe(path.join(ROOT, 'README.md'));
    expect(projectPath('migrations')).toBe(path.join(ROOT, 'migrations'));
    expect(projectPath('src/web/assets/site.css')).toBe(path.join(ROOT, 'src/web/assets/site.css'));
  });

  it('says what it could not find', () => {
    expect(() => projectPath('no-such-file.txt')).toThrow(/cannot find no-such-file\.txt/);
  });
});
