import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  lineOf,
  parseArgs,
  parseScenarioList,
  parseServerOptions,
  readBaseline,
  scenariosPerLeg,
  selectLegs,
  unknownEntries,
  type LegPlan,
} from '../../scripts/conformance-plan.ts';
import { projectPath } from '../../src/util/project-file.ts';

/**
 * `npm run conformance` (scripts/conformance.ts) without a service: how it reads the suites'
 * answers and its arguments, which runs it chooses, and the expected-failures lists it judges
 * them by. The suites themselves need Node.js 22; this runs on any Node.js the project supports.
 */
const HERE = path.dirname(projectPath('test/conformance/expected-failures.yml'));

function installedVersion(alias: string): string {
  return (JSON.parse(readFileSync(projectPath(`node_modules/${alias}/package.json`), 'utf8')) as { version: string }).version;
}

describe('the expected-failures lists', () => {
  const files = readdirSync(HERE).filter((f) => /^expected-failures.*\.yml$/.test(f)).sort();
  const stable = installedVersion('@modelcontextprotocol/conformance');
  const next = installedVersion('@modelcontextprotocol/conformance-next');

  it('are one for the 0.1 suite and one per revision for the next line', () => {
    expect(files).toEqual(['expected-failures-0.2-2025-11-25.yml', 'expected-failures-0.2-2026-07-28.yml', 'expected-failures.yml'].sort());
    expect(lineOf(next)).toBe('0.2');
  });

  it.each(files)('%s: each entry under server:, once, with its reason; the version it was settled for named', (file) => {
    const text = readFileSync(path.join(HERE, file), 'utf8');
    const { entries, problems } = readBaseline(text);
    expect(problems).toEqual([]);
    expect(entries.length).toBeGreaterThan(0);
    expect(text).toContain(file === 'expected-failures.yml' ? `conformance ${stable}` : `conformance ${next}`);
  });

  it('list no 2026-07-28 scenario as unserved: the server speaks that revision', () => {
    const { entries } = readBaseline(readFileSync(path.join(HERE, 'expected-failures-0.2-2026-07-28.yml'), 'utf8'));
    expect(entries.filter((e) => /not served/.test(e.reason)).map((e) => e.entry)).toEqual([]);
  });
});

describe('reading the suites', () => {
  it('takes the scenarios and their tags from `list --server`', () => {
    const out = ['Server scenarios (test against a server):', '  - server-initialize [2025-06-18,2025-11-25]', '  - tasks-lifecycle [extension]', '  - bare', ''].join('\n');
    expect(parseScenarioList(out)).toEqual([
      { name: 'server-initialize', tags: ['2025-06-18', '2025-11-25'] },
      { name: 'tasks-lifecycle', tags: ['extension'] },
      { name: 'bare', tags: [] },
    ]);
  });

  it('takes the options of `server --help`, and whether each takes a value', () => {
    const help = [
      'Options:',
      '  --url <url>                 URL of the server to test',
      '  -o, --output-dir <path>     Save results to this directory',
      '  --force                     Run a scenario even if',
      '  --verbose                   Show verbose output (JSON instead of pretty print)',
      '                              --not-an-option here',
    ].join('\n');
    expect([...parseServerOptions(help)]).toEqual([
      ['url', true],
      ['output-dir', true],
      ['o', true],
      ['force', false],
      ['verbose', false],
    ]);
  });
});

describe('the arguments', () => {
  const known = new Map([['verbose', false], ['timeout', true]]);
  const takesValue = (name: string) => known.get(name);

  it('keeps --only and --scenario (repeated, comma lists) and passes the rest on', () => {
    expect(parseArgs(['--scenario', 'ping,tools-list', '--only=0.2', '--scenario=caching', '--verbose', '--timeout', '5000'], takesValue)).toEqual({
      only: ['0.2'],
      scenarios: ['ping', 'tools-list', 'caching'],
      passed: [{ name: 'verbose', argv: ['--verbose'] }, { name: 'timeout', argv: ['--timeout', '5000'] }],
    });
  });

  it('refuses what the script sets, options no suite has, values missing, and stray words', () => {
    for (const argv of [['--url', 'http://x'], ['--suite', 'all'], ['--spec-version=2026-07-28'], ['-o', 'dir'], ['--expected-failures', 'f.yml'], ['--force']]) {
      expect(parseArgs(argv, takesValue)).toHaveProperty('error', expect.stringContaining('set by this script'));
    }
    expect(parseArgs(['--nope'], takesValue)).toHaveProperty('error', expect.stringContaining('unknown option --nope'));
    expect(parseArgs(['--timeout'], takesValue)).toHaveProperty('error', '--timeout needs a value');
    expect(parseArgs(['--scenario', '--verbose'], takesValue)).toHaveProperty('error', '--scenario needs a value');
    expect(parseArgs(['--verbose=yes'], takesValue)).toHaveProperty('error', '--verbose takes no value');
    expect(parseArgs(['ping'], takesValue)).toHaveProperty('error', expect.stringContaining('unexpected argument'));
  });
});

describe('choosing the runs', () => {
  const legs: LegPlan[] = [
    { id: '0.1.16', version: '0.1.16', timeline: ['ping', 'tools-list'], extensions: [] },
    { id: '0.2.0-alpha.12/2026-07-28', version: '0.2.0-alpha.12', revision: '2026-07-28', timeline: ['tools-list', 'caching'], extensions: ['tasks-lifecycle'] },
    { id: '0.2.0-alpha.12/2025-11-25', version: '0.2.0-alpha.12', revision: '2025-11-25', timeline: ['ping', 'tools-list'], extensions: [] },
  ];
  const ids = (chosen: LegPlan[] | { error: string }) => ('error' in chosen ? chosen : chosen.map((l) => l.id));

  it('takes every run without --only', () => {
    expect(ids(selectLegs(legs, []))).toEqual(legs.map((l) => l.id));
  });

  it('takes a version or its start, VERSION/REVISION, or a revision alone', () => {
    expect(ids(selectLegs(legs, ['0.1']))).toEqual(['0.1.16']);
    expect(ids(selectLegs(legs, ['0.2']))).toEqual(['0.2.0-alpha.12/2026-07-28', '0.2.0-alpha.12/2025-11-25']);
    expect(ids(selectLegs(legs, ['0.2.0-alpha.12/2025-11-25']))).toEqual(['0.2.0-alpha.12/2025-11-25']);
    expect(ids(selectLegs(legs, ['0.2/2026-07-28', '0.1.16']))).toEqual(['0.1.16', '0.2.0-alpha.12/2026-07-28']);
    expect(ids(selectLegs(legs, ['2026-07-28']))).toEqual(['0.2.0-alpha.12/2026-07-28']);
  });

  it('refuses a selector that chooses nothing', () => {
    for (const only of ['0.3', '0.1/2026-07-28', '0.2.1', '0.2/2026-07-28/x', '2024-11-05']) {
      expect(selectLegs(legs, [only])).toHaveProperty('error', expect.stringContaining(`--only ${only} chooses no run`));
    }
  });

  it('runs a scenario in each run that has it, extensions included, and names the ones none has', () => {
    const { perLeg, unknown } = scenariosPerLeg(legs, ['ping', 'tasks-lifecycle', 'nope', 'ping']);
    expect(legs.map((l) => perLeg.get(l))).toEqual([['ping'], ['tasks-lifecycle'], ['ping']]);
    expect(unknown).toEqual(['nope']);
  });

  it('finds list entries that name no scenario of their run', () => {
    const { entries } = readBaseline('server:\n  - caching  # a\n  - tasks-lifecycle:some-check  # b\n  - ping  # c\n');
    expect(unknownEntries(entries, legs[1]!).map((e) => e.entry)).toEqual(['ping']);
  });
});

describe('reading a list', () => {
  it('takes each entry with the reason after it', () => {
    const text = '# header\nserver:\n  - logging-set-level   # no logging capability\n  - tools-list:wire-schema-valid # one check\n';
    expect(readBaseline(text)).toEqual({
      entries: [
        { entry: 'logging-set-level', scenario: 'logging-set-level', reason: 'no logging capability', line: 3 },
        { entry: 'tools-list:wire-schema-valid', scenario: 'tools-list', reason: 'one check', line: 4 },
      ],
      problems: [],
    });
  });

  it('names entries without a reason, outside server:, or twice', () => {
    const text = 'client:\n  - sse-retry  # x\nserver:\n  - ping\n  - ping  # again\n';
    expect(readBaseline(text).problems).toEqual([
      'line 2: sse-retry is not under server:',
      'line 4: ping has no reason (write it after the entry: "- ping  # why")',
      'line 5: ping is listed twice',
    ]);
  });
});
