/**
 * What `npm run conformance` runs, worked out without running anything: the suites' answers to
 * `list` and `server --help` read, the command's arguments read, the runs ("legs") chosen, and
 * the expected-failures lists checked. scripts/conformance.ts does the running.
 */

/** A protocol revision as the suites name them: a date. */
const REVISION = /^\d{4}-\d{2}-\d{2}$/;

/** Options of the suite's `server` command that the script sets itself. */
export const OWN_OPTIONS = new Set(['url', 'expected-failures', 'output-dir', 'o', 'spec-version', 'requirements', 'force', 'suite']);

export interface ListedScenario {
  name: string;
  /** What `list` shows in brackets: the revisions it applies to, or `extension`. */
  tags: string[];
}

/** The scenarios of a suite's `list --server` answer, with their tags. */
export function parseScenarioList(output: string): ListedScenario[] {
  const out: ListedScenario[] = [];
  for (const line of output.split('\n')) {
    const match = /^\s+- (\S+)(?: \[([^\]]*)\])?\s*$/.exec(line);
    if (match) out.push({ name: match[1]!, tags: match[2] ? match[2].split(',').map((t) => t.trim()) : [] });
  }
  return out;
}

/** The options of a suite's `server --help` answer: name (without dashes) → whether it takes a value. */
export function parseServerOptions(help: string): Map<string, boolean> {
  const options = new Map<string, boolean>();
  for (const line of help.split('\n')) {
    // Commander's layout: an option at two spaces, its wrapped description further in.
    const match = /^ {2}(?:-(\w), )?--([\w-]+)( <[^>]+>)?/.exec(line);
    if (!match) continue;
    options.set(match[2]!, Boolean(match[3]));
    if (match[1]) options.set(match[1], Boolean(match[3]));
  }
  return options;
}

/** One option passed on to the suites, as given: `--verbose`, `--timeout 60000`. */
export interface PassedOption {
  name: string;
  argv: string[];
}

export interface Request {
  /** `--only` selectors, in order; empty: every leg. */
  only: string[];
  /** `--scenario` names, in order; empty: every scenario. */
  scenarios: string[];
  passed: PassedOption[];
}

/**
 * The command's arguments: `--only` and `--scenario` (each repeatable, comma lists allowed) for
 * the script, anything else for the suites' `server` command (`--help` is the script's, read
 * before). `takesValue` says, for an option
 * some suite knows, whether it takes a value; an option no suite knows is an error.
 */
export function parseArgs(argv: string[], takesValue: (name: string) => boolean | undefined): Request | { error: string } {
  const request: Request = { only: [], scenarios: [], passed: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--?([\w-]+)(?:=(.*))?$/.exec(arg);
    if (!match) return { error: `unexpected argument ${JSON.stringify(arg)}: options only (see --help)` };
    const name = match[1]!;
    const inline = match[2];
    const value = (): string | undefined => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('-')) return undefined;
      i++;
      return next;
    };
    if (name === 'only' || name === 'scenario') {
      const given = value();
      if (!given) return { error: `--${name} needs a value` };
      const items = given.split(',').map((s) => s.trim()).filter(Boolean);
      (name === 'only' ? request.only : request.scenarios).push(...items);
      continue;
    }
    if (OWN_OPTIONS.has(name)) {
      return { error: `${arg.split('=')[0]} is set by this script (each run's URL, revision, expected failures and folder); choose runs with --only and scenarios with --scenario` };
    }
    const wants = takesValue(name);
    if (wants === undefined) return { error: `unknown option ${arg.split('=')[0]}: neither suite's server command has it` };
    if (wants) {
      const given = value();
      if (given === undefined) return { error: `--${name} needs a value` };
      request.passed.push({ name, argv: [`--${name}`, given] });
    } else {
      if (inline !== undefined) return { error: `--${name} takes no value` };
      request.passed.push({ name, argv: [`--${name}`] });
    }
  }
  return request;
}

/** A leg: one suite version at one protocol revision, with its own expected-failures list. */
export interface LegPlan {
  /** The suite's version, then `/REVISION` when the leg runs at a chosen revision; also its artifacts folder. */
  id: string;
  version: string;
  revision?: string;
  /** The scenarios the suite selects itself (`--suite all`, `--spec-version REVISION`). */
  timeline: string[];
  /** Extension scenarios: off the suite's timeline, run one at a time at the leg's revision. */
  extensions: string[];
}

/** Whether a version matches a version given in `--only`: the same, or the start of it (`0.2` of `0.2.0-alpha.12`). */
function versionMatches(version: string, given: string): boolean {
  return version === given || version.startsWith(`${given}.`) || version.startsWith(`${given}-`);
}

/**
 * The legs that `--only` selectors choose: `VERSION` (or its start, e.g. `0.2`), `VERSION/REVISION`,
 * or `REVISION` alone (the legs run at that revision). Every selector must choose some leg.
 */
export function selectLegs<L extends LegPlan>(legs: L[], only: string[]): L[] | { error: string } {
  if (only.length === 0) return legs;
  const chosen = new Set<L>();
  for (const selector of only) {
    const [version, revision, extra] = REVISION.test(selector) ? [undefined, selector] : selector.split('/');
    const hits = extra === undefined
      ? legs.filter((leg) => (version === undefined || versionMatches(leg.version, version)) && (revision === undefined || leg.revision === revision))
      : [];
    if (hits.length === 0) {
      return { error: `--only ${selector} chooses no run; the runs are ${legs.map((l) => l.id).join(', ')} (give a version or its start such as 0.2, VERSION/REVISION, or a revision alone)` };
    }
    for (const leg of hits) chosen.add(leg);
  }
  return legs.filter((leg) => chosen.has(leg));
}

/** Which of the requested scenarios a leg has; and the requested ones that no selected leg has. */
export function scenariosPerLeg<L extends LegPlan>(legs: L[], requested: string[]): { perLeg: Map<L, string[]>; unknown: string[] } {
  const perLeg = new Map<L, string[]>();
  const found = new Set<string>();
  for (const leg of legs) {
    const has = new Set([...leg.timeline, ...leg.extensions]);
    const mine = requested.filter((s) => has.has(s));
    for (const s of mine) found.add(s);
    perLeg.set(leg, [...new Set(mine)]);
  }
  return { perLeg, unknown: [...new Set(requested.filter((s) => !found.has(s)))] };
}

export interface BaselineEntry {
  /** As written: `scenario` or `scenario:check-id`. */
  entry: string;
  scenario: string;
  reason: string;
  line: number;
}

/**
 * An expected-failures file read line by line: its `server:` entries, each with the reason
 * written after it (`  - scenario  # reason`). Problems: an entry without a reason, an entry
 * outside `server:`, an entry twice.
 */
export function readBaseline(text: string): { entries: BaselineEntry[]; problems: string[] } {
  const entries: BaselineEntry[] = [];
  const problems: string[] = [];
  let section: string | undefined;
  const seen = new Set<string>();
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const key = /^([\w-]+):\s*(?:#.*)?$/.exec(raw);
    if (key) {
      section = key[1];
      return;
    }
    const item = /^\s+-\s+([^\s#]+)\s*(?:#\s*(.*?))?\s*$/.exec(raw);
    if (!item) return;
    const entry = item[1]!;
    if (section !== 'server') {
      problems.push(`line ${line}: ${entry} is not under server:`);
      return;
    }
    const reason = item[2] ?? '';
    if (!reason) problems.push(`line ${line}: ${entry} has no reason (write it after the entry: "- ${entry}  # why")`);
    if (seen.has(entry)) problems.push(`line ${line}: ${entry} is listed twice`);
    seen.add(entry);
    entries.push({ entry, scenario: entry.split(':')[0]!, reason, line });
  });
  return { entries, problems };
}

/** Entries naming a scenario the leg does not run. */
export function unknownEntries(entries: BaselineEntry[], leg: LegPlan): BaselineEntry[] {
  const has = new Set([...leg.timeline, ...leg.extensions]);
  return entries.filter((e) => !has.has(e.scenario));
}

/** `0.2` of `0.2.0-alpha.12`: the suite's line, which names its expected-failures files. */
export function lineOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}
