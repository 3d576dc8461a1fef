import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { isApiKeyText } from '../../accounts/api-keys.js';
import { AUDIT_TYPES, type AuditRecord, type AuditType } from '../../accounts/audit.js';
import { parseBearer } from '../../auth/bearer.js';
import { ADMIN_ROLE_NAME } from '../../accounts/roles.js';
import { parseRoles } from '../../auth/roles.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';
import { queryOne } from '../params.js';
import { adminOf } from './auth.js';

const TYPES = new Set<string>(AUDIT_TYPES);

function time(ctx: AppContext, name: string): number | undefined {
  const v = queryOne(ctx, name);
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new AppError('VALIDATION_ERROR', `${name} must be an ISO 8601 time`);
  return ms;
}

const STREAM_ID = /^\d{1,16}-\d{1,10}$/;
const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;

function typesOf(ctx: AppContext): AuditType[] | undefined {
  const typeList = queryOne(ctx, 'type')?.split(',');
  for (const t of typeList ?? []) if (!TYPES.has(t)) throw new AppError('VALIDATION_ERROR', `Unknown event type ${t}`);
  return typeList as AuditType[] | undefined;
}

/** GET /admin/api/v1/events?userId&type=a,b&since&until&cursor&limit: the audit trail, newest first. */
export function listEvents(services: Services) {
  return async (ctx: AppContext): Promise<void> => {
    const typeList = typesOf(ctx);
    const limitText = queryOne(ctx, 'limit');
    const limit = limitText === undefined ? undefined : Number(limitText);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 200)) throw new AppError('VALIDATION_ERROR', 'limit must be 1..200');
    const cursor = queryOne(ctx, 'cursor');
    if (cursor !== undefined && !/^\d{1,16}-\d{1,10}$/.test(cursor)) throw new AppError('VALIDATION_ERROR', 'Malformed cursor');
    const page = await services.audit.list({
      userId: queryOne(ctx, 'userId'),
      types: typeList,
      since: time(ctx, 'since'),
      until: time(ctx, 'until'),
      cursor,
      limit,
    });
    ctx.body = { success: true, ...page };
  };
}

/** One event as Server-Sent Events write it: its stream id (what Last-Event-ID resumes from), the `audit` event, the record. */
export function sseFrame(r: AuditRecord): string {
  return `id: ${r.id}\nevent: audit\ndata: ${JSON.stringify(r)}\n\n`;
}

/**
 * Whether the credential that opened a stream still would (adminAccess let it in once; this
 * neither spends the caller's action budget nor counts as a failed sign-in): the key not
 * revoked, or the access token's session open, unexpired and its person still an admin.
 */
async function stillAllowed(services: Services, ctx: AppContext): Promise<boolean> {
  const bearer = parseBearer(ctx.get('authorization'));
  if (bearer === null) return false;
  if (isApiKeyText(bearer)) return (await services.apiKeys.verify(bearer))?.scopes.includes('events:read') ?? false;
  const claims = await services.sessions.authenticate(bearer);
  return parseRoles(await services.redis.hget(services.keys.user(claims.sub), 'roles'), []).includes(ADMIN_ROLE_NAME);
}

/**
 * GET /admin/api/v1/events/stream?userId&type=a,b&after: the audit trail live, as Server-Sent
 * Events (docs/accounts.md, "The live stream"): the events after `Last-Event-ID` (or `after`; neither:
 * from now on), then each as it is recorded. Every AUDIT_STREAM_HEARTBEAT_SECONDS the caller's credential is
 * checked again and, when nothing else was written, a comment line goes out: a revoked key,
 * a role taken away or an access token past its life ends the stream (the client reconnects
 * with a fresh one and its Last-Event-ID). At most AUDIT_STREAMS_PER_NODE at once per node
 * (429 past it); each ends when its client goes or the node shuts down.
 */
export function streamEvents(services: Services) {
  const heartbeatMs = services.config.audit.heartbeatSeconds * 1000;
  return async (ctx: AppContext): Promise<void> => {
    const types = typesOf(ctx);
    const userId = queryOne(ctx, 'userId');
    if (userId !== undefined && !USER_ID.test(userId)) throw new AppError('VALIDATION_ERROR', 'Malformed userId');
    const header = ctx.get('last-event-id').trim();
    const after = header !== '' ? header : queryOne(ctx, 'after');
    if (after !== undefined && !STREAM_ID.test(after)) throw new AppError('VALIDATION_ERROR', 'Malformed Last-Event-ID or after');
    // past AUDIT_STREAMS_PER_NODE this throws RATE_LIMITED before anything is written
    const follower = services.audit.follow(after, { userId, types });

    const body = new PassThrough();
    const gone = new AbortController();
    let wrote = Date.now();
    let done = false;
    const write = async (text: string): Promise<void> => {
      if (done) return;
      wrote = Date.now();
      if (!body.write(text)) await once(body, 'drain', { signal: gone.signal });
    };
    // every beat checks the credential again, busy or quiet; the comment goes out only when quiet
    const heartbeat = setInterval(() => {
      const quiet = Date.now() - wrote >= heartbeatMs - 50;
      stillAllowed(services, ctx).then(
        (yes) => (!yes ? finish() : quiet ? write(': heartbeat\n\n') : undefined),
        () => finish(),
      );
    }, heartbeatMs);
    heartbeat.unref();
    const finish = (): void => {
      if (done) return;
      done = true;
      clearInterval(heartbeat);
      gone.abort();
      follower.close();
      body.end();
    };
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.res.once('close', finish);

    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-store');
    // a proxy (nginx) must pass each event on as it comes
    ctx.set('X-Accel-Buffering', 'no');
    // a stream's connection is never reused: when it ends (client gone, shutdown), so does the connection
    ctx.set('Connection', 'close');
    ctx.body = body;
    ctx.state.log.info('audit event stream opened', { by: adminOf(ctx).actor.kind, after: follower.position ?? 'now', userId, types: types?.join(',') });
    void (async () => {
      await write('retry: 5000\n: connected\n\n');
      for await (const r of follower.records()) await write(sseFrame(r));
    })()
      .catch((err: unknown) => {
        if (!gone.signal.aborted) ctx.state.log.warn('audit event stream failed', { error: err instanceof Error ? err.message : String(err) });
      })
      .finally(finish);
  };
}
