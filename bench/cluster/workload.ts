import { randomBytes, randomInt } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Cluster } from './cluster.ts';
import { callTool, connectApp, csrfOf, mcpClient, signIn, type ClusterBrowser } from './clients.ts';

/**
 * Makers writing through every API process at once, as MCP hosts and browsers do, with a
 * ledger of what each client was told. A write is acknowledged when the client got its success
 * answer; anything else (a refused connection, a 503, a timeout) leaves it unknown, and the
 * client tries the same write again on the next process, as a careful client would: the same
 * website (answered already_submitted once it exists), the same punchline, the same decision.
 * Afterwards the ledger is held against PostgreSQL (checks.ts): every acknowledged write exists
 * exactly once, and nothing exists twice.
 *
 * Each maker, in turn: submits a new site (maker tool), changes its punchline (maker tool),
 * and an admin hides and restores it (the admin's web form), then changes its punchline again.
 */
export interface MakerAgent {
  readonly email: string;
  /** One MCP client per API process. */
  readonly mcp: Client[];
  /** An admin's signed-in browser and the CSRF token of its open page. */
  readonly admin: ClusterBrowser;
  readonly adminCsrf: string;
}

interface SubmitRecord {
  readonly website: string;
  readonly email: string;
  acked: boolean;
  slug: string | undefined;
}
interface UpdateRecord {
  readonly slug: string;
  readonly punchline: string;
  acked: boolean;
  /** Order of the update among all updates of its listing. */
  readonly order: number;
}
interface DecisionRecord {
  readonly slug: string;
  readonly action: 'hide' | 'restore';
  /** The feedback that marks this decision's row in catalog.review_decisions. */
  readonly feedback: string;
  acked: boolean;
}

export interface Ledger {
  readonly submits: SubmitRecord[];
  readonly updates: UpdateRecord[];
  readonly decisions: DecisionRecord[];
  /** Requests sent, and how they were answered. */
  readonly answers: { sent: number; acknowledged: number; unavailable: number; http5xx: number; connectionErrors: number; other: number };
  /** HTTP statuses of 5xx answers, by status. */
  readonly statuses5xx: Record<string, number>;
  /** Time from sending a write to its SERVICE_UNAVAILABLE answer (ms), while the database was away. */
  readonly unavailableAnswerMs: number[];
}

export function newLedger(): Ledger {
  return { submits: [], updates: [], decisions: [], answers: { sent: 0, acknowledged: 0, unavailable: 0, http5xx: 0, connectionErrors: 0, other: 0 }, statuses5xx: {}, unavailableAnswerMs: [] };
}

/** Makers with an app connected through the real OAuth flow, and admins signed in on the web. */
export async function makerAgents(cluster: Cluster, count: number, run: string): Promise<MakerAgent[]> {
  const apis = cluster.apis;
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = `maker-${i + 1}-${run}@cluster.example`;
      const at = (k: number) => apis[(i + k) % apis.length]!;
      const browser = await signIn(email, at(0), at(1));
      const app = await connectApp(browser, { authorize: at(0), consent: at(1), token: at(2) });
      const mcp = await Promise.all(apis.map((api) => mcpClient(api, app.accessToken)));
      const adminEmail = `admin-${i + 1}-${run}@cluster.example`;
      const admin = await signIn(adminEmail, at(1), at(2));
      await cluster.pool.query('UPDATE catalog.makers SET is_admin = true WHERE email = $1', [adminEmail]);
      const page = await admin.request(at(0).url!, '/admin/review');
      if (page.status !== 200) throw new Error(`the review queue answered ${page.status} to ${adminEmail}`);
      return { email, mcp, admin, adminCsrf: csrfOf(await page.text()) };
    }),
  );
}

type Outcome = { kind: 'ack'; value?: string } | { kind: 'conflict' } | { kind: 'retry' };

export interface WorkloadOptions {
  cluster: Cluster;
  agents: readonly MakerAgent[];
  categories: readonly string[];
  /** Stop issuing writes after this many (across all agents), or at `until`. */
  writes?: number;
  until?: () => boolean;
  ledger: Ledger;
  /** A name unique to this run, in websites and tokens. */
  run: string;
  /** Attempts of one write before the client gives it up. */
  attempts?: number;
  /** At most this many writes a second across all agents (unpaced when absent). */
  perSecond?: number;
}

const token = () => randomBytes(5).toString('hex');

export async function runMakerWorkload(opts: WorkloadOptions): Promise<void> {
  const { cluster, ledger } = opts;
  const apis = cluster.apis;
  const attempts = opts.attempts ?? 8;
  let issued = 0;
  let next = randomInt(apis.length);
  const more = () => (opts.writes === undefined || issued < opts.writes) && !(opts.until?.() ?? false);
  const nextApi = () => (next = (next + 1) % apis.length);

  /** One write, tried on successive API processes until it is answered for certain or given up. */
  const startedAt = Date.now();
  async function write(send: (api: number) => Promise<Outcome>): Promise<Outcome> {
    const due = opts.perSecond ? startedAt + (issued * 1000) / opts.perSecond : 0;
    issued++;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    for (let attempt = 0; attempt < attempts; attempt++) {
      const outcome = await send(nextApi());
      if (outcome.kind === 'ack') return outcome;
      // Refused because the listing's state moved on: only this client changes it, so on a
      // retry that means an earlier attempt went through.
      if (outcome.kind === 'conflict') return attempt > 0 ? { kind: 'ack' } : outcome;
      await new Promise((r) => setTimeout(r, Math.min(100 + 150 * attempt, 1000)));
    }
    return { kind: 'retry' };
  }

  const counted = async (send: () => Promise<Outcome>): Promise<Outcome> => {
    ledger.answers.sent++;
    try {
      const outcome = await send();
      if (outcome.kind === 'ack') ledger.answers.acknowledged++;
      return outcome;
    } catch (err) {
      const status = (err as { code?: unknown }).code;
      if (typeof status === 'number' && status >= 500) countHttp5xx(ledger, status);
      else if (isConnectionError(err)) ledger.answers.connectionErrors++;
      else ledger.answers.other++;
      return { kind: 'retry' };
    }
  };

  /** A maker tool call: ack, SERVICE_UNAVAILABLE (retry), or a failure. */
  const tool = (agent: MakerAgent, api: number, name: string, args: Record<string, unknown>, pick: (body: Record<string, unknown>) => string | undefined) =>
    counted(async () => {
      const started = Date.now();
      const answer = await callTool(agent.mcp[api]!, name, args);
      if (answer.ok) return { kind: 'ack', value: pick(answer.body) } as Outcome;
      if (answer.body.code === 'SERVICE_UNAVAILABLE') {
        ledger.answers.unavailable++;
        ledger.unavailableAnswerMs.push(Date.now() - started);
        return { kind: 'retry' } as Outcome;
      }
      if (answer.body.code === 'CONFLICT') return { kind: 'conflict' } as Outcome;
      ledger.answers.other++;
      return { kind: 'retry' } as Outcome;
    });

  /** An admin's decision through the web form: 303 is done, 409 says the state moved on. */
  const decide = (agent: MakerAgent, api: number, slug: string, action: string, feedback: string) =>
    counted(async () => {
      const started = Date.now();
      const res = await agent.admin.request(apis[api]!.url!, `/admin/listings/${slug}/decisions`, { form: { _csrf: agent.adminCsrf, action, from: 'listing', feedback } });
      await res.arrayBuffer();
      if (res.status === 303) return { kind: 'ack' } as Outcome;
      if (res.status === 409) return { kind: 'conflict' } as Outcome;
      if (res.status >= 500) {
        countHttp5xx(ledger, res.status);
        if (res.status === 503) {
          ledger.answers.unavailable++;
          ledger.unavailableAnswerMs.push(Date.now() - started);
        }
      } else ledger.answers.other++;
      return { kind: 'retry' } as Outcome;
    });

  async function agentLoop(agent: MakerAgent, index: number): Promise<void> {
    let updates = 0;
    for (let round = 0; more(); round++) {
      const website = cluster.sites.url(`w${index + 1}-${round}-${opts.run}.cluster.example`);
      const submit: SubmitRecord = { website, email: agent.email, acked: false, slug: undefined };
      ledger.submits.push(submit);
      const mark = token();
      const submitted = await write((api) =>
        tool(
          agent,
          api,
          'submit_product',
          {
            website,
            name: `Cluster ${mark}`,
            punchline: `Made in round ${round} by maker ${index + 1}`,
            description: `A product submitted while the cluster is under faults (${mark}).`,
            category: opts.categories[randomInt(opts.categories.length)],
            pricing_model: 'free',
          },
          // A retry of a submission that went through is told of the listing it made.
          (body) => ((body.listing ?? body.live_listing) as { slug?: string } | null)?.slug,
        ),
      );
      if (submitted.kind !== 'ack' || !submitted.value) continue;
      submit.acked = true;
      const slug = submitted.value;
      submit.slug = slug;

      const update = async () => {
        if (!more()) return false;
        const record: UpdateRecord = { slug, punchline: `Changed ${token()} in round ${round}`, acked: false, order: updates++ };
        ledger.updates.push(record);
        const done = await write((api) => tool(agent, api, 'update_listing', { slug, punchline: record.punchline }, () => 'done'));
        record.acked = done.kind === 'ack';
        return record.acked;
      };
      const decision = async (action: 'hide' | 'restore') => {
        if (!more()) return false;
        const record: DecisionRecord = { slug, action, feedback: `${action} ${token()}`, acked: false };
        ledger.decisions.push(record);
        const done = await write((api) => decide(agent, api, slug, action, record.feedback));
        record.acked = done.kind === 'ack';
        return record.acked;
      };
      if (!(await update())) continue;
      if (!(await decision('hide'))) continue;
      if (!(await decision('restore'))) continue;
      await update();
    }
  }

  await Promise.all(opts.agents.map((agent, i) => agentLoop(agent, i)));
}

function countHttp5xx(ledger: Ledger, status: number): void {
  ledger.answers.http5xx++;
  ledger.statuses5xx[status] = (ledger.statuses5xx[status] ?? 0) + 1;
}

/** A request that got no HTTP answer at all: refused, reset or timed out (a killed process). */
function isConnectionError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|UND_ERR_|ETIMEDOUT)/.test(code)) return true;
    if ((e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError') return true;
    if (/fetch failed|other side closed|socket hang up/.test(String((e as Error).message))) return true;
  }
  return false;
}

export async function closeAgents(agents: readonly MakerAgent[]): Promise<void> {
  await Promise.all(agents.flatMap((a) => a.mcp.map((c) => c.close().catch(() => undefined))));
}

;
