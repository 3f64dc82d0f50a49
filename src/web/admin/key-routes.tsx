import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  createKey,
  DEFAULT_GRACE_HOURS,
  KEY_FAMILIES,
  KeyInputError,
  KeyNotFoundError,
  keyUsage,
  listKeys,
  parseExpiry,
  parseGraceHours,
  parseKeyLimit,
  parseKeyName,
  revokeKey,
  rotateKey,
  type KeyFamily,
} from '../../auth/consumer-keys/consumer-keys.ts';
import type { Pool } from '../../db/pool.ts';
import type { Session } from '../components/layout.tsx';
import type { NoticeMessage } from '../components/notice.tsx';
import { pageSession } from '../maker-session.ts';
import { sendPrivatePage } from '../render.ts';
import { CHART_DAYS, FAMILY_LABELS, KEY_PATHS, KeyIssuedPage, KeysPage, RevokeKeyPage, type CreateProblem, type CreateValues, type RotateProblem } from './key-pages.tsx';

/**
 * The consumer keys' pages, registered by registerAdminPages inside the admins' scope (its hook
 * answers everyone but an admin with 403; CSRF on every POST):
 *
 * GET  /admin/keys                   every key, its budgets, last use and 30-day chart; the forms
 * POST /admin/keys                   make a key: its secret on the answer, this once
 * POST /admin/keys/:name/rotate      a new secret (grace_hours): shown on the answer, this once
 * GET  /admin/keys/:name/revoke      the confirmation step
 * POST /admin/keys/:name/revoke      revoke, then back to the list (303)
 *
 * The answers that show a secret are pages of their own (never a redirect: the secret would be
 * in an address or a cookie), sent `no-store` like every private page, and nothing logs them.
 */
export interface KeyPagesDeps {
  pool: Pool;
  now?: () => Date;
}

const NAME = /^[a-z0-9-]{1,64}$/;

/** What the list says after a key's form was done (?done=…&key=NAME). */
const DONE: ReadonlyMap<string, string> = new Map([
  ['made', 'is made; every API process takes it within a second.'],
  ['rotated', 'has a new secret; every API process takes it within a second.'],
  ['revoked', 'is revoked: every API process refuses it within a second.'],
]);
const isKeyName = (s: unknown): s is string => typeof s === 'string' && NAME.test(s);

/** A form value as typed (a bounded string; anything else is empty). */
const typedOf = (v: unknown): string => (typeof v === 'string' ? v.slice(0, 200) : '');

/** The operator's messages of src/auth read as sentences on the page. */
function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

export function registerKeyPages(admin: FastifyInstance, deps: KeyPagesDeps): void {
  const now = () => deps.now?.() ?? new Date();
  /** The signed-in admin's header; the admins' scope guarantees the session. */
  const session = (request: FastifyRequest, reply: FastifyReply): Session => pageSession(request, reply)!;

  async function keysPage(request: FastifyRequest, reply: FastifyReply, opts: { status?: number; notice?: NoticeMessage | null; create?: CreateProblem; rotate?: RotateProblem } = {}) {
    const t = now().getTime();
    const [keys, usage] = await Promise.all([listKeys(deps.pool, t), keyUsage(deps.pool, { days: CHART_DAYS, now: t })]);
    return sendPrivatePage(
      reply,
      <KeysPage
        session={session(request, reply)}
        keys={keys}
        usage={new Map(usage.keys.map((k) => [k.name, k.days]))}
        notice={opts.notice ?? null}
        {...(opts.create && { create: opts.create })}
        {...(opts.rotate && { rotate: opts.rotate })}
      />,
      { status: opts.status ?? 200 },
    );
  }

  const notFound = (request: FastifyRequest, reply: FastifyReply, name: string) =>
    keysPage(request, reply, { status: 404, notice: { kind: 'error', message: `No key is named ${JSON.stringify(name.slice(0, 64))}.` } });

  admin.get<{ Querystring: { done?: string; key?: string } }>(KEY_PATHS.list, async (request, reply) => {
    const { done, key } = request.query;
    const message = isKeyName(key) && done !== undefined ? DONE.get(done) : undefined;
    const notice: NoticeMessage | null = message ? { kind: 'success', message: `The key ${key} ${message}` } : null;
    return keysPage(request, reply, { notice });
  });

  admin.post<{ Body: Record<string, unknown> | undefined }>(KEY_PATHS.create, async (request, reply) => {
    const body = request.body ?? {};
    const values: CreateValues = {
      name: typedOf(body.name),
      search: typedOf(body.search),
      other: typedOf(body.other),
      export: typedOf(body.export),
      changes: typedOf(body.changes),
      expires: typedOf(body.expires),
    };
    // Every field is checked, so the page names every problem at once.
    const errors: Record<string, string> = {};
    const attempt = <T,>(field: string, parse: () => T): T | undefined => {
      try {
        return parse();
      } catch (err) {
        if (!(err instanceof KeyInputError)) throw err;
        errors[field] = sentence(err.message);
        return undefined;
      }
    };
    const nameText = values.name.trim();
    if (nameText === '') errors.name = 'Enter a name: 1 to 64 of a-z, 0-9 and -.';
    const name = nameText === '' ? undefined : attempt('name', () => parseKeyName(nameText));
    const limits: Partial<Record<KeyFamily, number>> = {};
    for (const family of KEY_FAMILIES) {
      if (values[family].trim() === '') continue;
      const limit = attempt(family, () => parseKeyLimit(FAMILY_LABELS[family].label, values[family]));
      if (limit !== undefined) limits[family] = limit;
    }
    const expiresOn = values.expires.trim() === '' ? null : attempt('expires', () => parseExpiry(values.expires, now().getTime()));
    const sendBack = (status = 400) => keysPage(request, reply, { status, create: { values, errors } });
    if (name === undefined || Object.keys(errors).length > 0) return sendBack();

    let issued;
    try {
      issued = await createKey(deps.pool, { name, limits, expiresOn: expiresOn ?? null });
    } catch (err) {
      if (!(err instanceof KeyInputError)) throw err;
      errors.name = sentence(err.message);
      return sendBack();
    }
    request.log.info({ key: issued.name, prefix: issued.prefix, by: request.webSession!.maker.id }, 'consumer key made on the admin page');
    return sendPrivatePage(reply, <KeyIssuedPage session={session(request, reply)} issued={issued} />);
  });

  admin.post<{ Params: { name: string }; Body: Record<string, unknown> | undefined }>('/admin/keys/:name/rotate', async (request, reply) => {
    const name = request.params.name;
    if (!isKeyName(name)) return notFound(request, reply, name);
    const body = request.body ?? {};
    const graceText = typedOf(body.grace_hours);
    const problem = (message: string): RotateProblem => ({ name, message, graceHours: graceText });

    let grace: number;
    try {
      grace = graceText.trim() === '' ? DEFAULT_GRACE_HOURS : parseGraceHours(graceText);
    } catch (err) {
      if (!(err instanceof KeyInputError)) throw err;
      return keysPage(request, reply, { status: 400, rotate: problem(sentence(err.message)) });
    }
    const info = (await listKeys(deps.pool, now().getTime())).find((k) => k.name === name);
    if (!info) return notFound(request, reply, name);
    // The form names the secret the admin saw: posted again after a rotation (a reload of the
    // answer), it would replace the secret just handed over.
    if (typeof body.current === 'string' && body.current !== info.prefix) {
      return keysPage(request, reply, {
        status: 409,
        rotate: problem(`This key was rotated since the page was loaded: its secret now starts ${info.prefix}…. Nothing was changed; rotate again if another secret is needed.`),
      });
    }
    let issued;
    try {
      issued = await rotateKey(deps.pool, name, grace);
    } catch (err) {
      if (err instanceof KeyNotFoundError) return notFound(request, reply, name);
      if (!(err instanceof KeyInputError)) throw err;
      return keysPage(request, reply, { status: 400, rotate: problem(sentence(err.message)) });
    }
    request.log.info({ key: issued.name, prefix: issued.prefix, by: request.webSession!.maker.id }, 'consumer key rotated on the admin page');
    return sendPrivatePage(
      reply,
      <KeyIssuedPage session={session(request, reply)} issued={issued} rotated={{ previousPrefix: info.prefix, previousRetiresAt: issued.previous_retires_at }} />,
    );
  });

  admin.get<{ Params: { name: string } }>('/admin/keys/:name/revoke', async (request, reply) => {
    const name = request.params.name;
    const info = isKeyName(name) ? (await listKeys(deps.pool, now().getTime())).find((k) => k.name === name) : undefined;
    if (!info) return notFound(request, reply, name);
    return sendPrivatePage(reply, <RevokeKeyPage session={session(request, reply)} info={info} />);
  });

  admin.post<{ Params: { name: string } }>('/admin/keys/:name/revoke', async (request, reply) => {
    const name = request.params.name;
    if (!isKeyName(name)) return notFound(request, reply, name);
    try {
      await revokeKey(deps.pool, name);
    } catch (err) {
      if (err instanceof KeyNotFoundError) return notFound(request, reply, name);
      throw err;
    }
    request.log.info({ key: name, by: request.webSession!.maker.id }, 'consumer key revoked on the admin page');
    return reply.redirect(`${KEY_PATHS.list}?done=revoked&key=${encodeURIComponent(name)}`, 303);
  });
}
