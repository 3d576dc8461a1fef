import type { Queue } from 'bullmq';
import type { Middleware, Next, ParameterizedContext } from 'koa';

export const DASHBOARD_PATH = '/admin/queues';

/** True for the dashboard page and everything under it (assets, its JSON API). */
/**
 * The dashboard's page from this origin only. Bull Board's page links its fonts (IBM Plex) from
 * Google Fonts: the link is taken out of its HTML (its styles fall back to the system's sans
 * serif and monospace), and its policy allows no other host, so an upgrade that adds another
 * third-party reference is blocked rather than fetched. Its bundle needs no more than this (the
 * scripts are files; its styles are partly inline).
 */
const THIRD_PARTY_LINK = /<link\b[^>]*\bhref="https?:\/\/[^"]*"[^>]*>/gi;
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const isDashboardPath = (path: string): boolean => path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);

/**
 * Bull Board over every queue, mounted at /admin/queues (the caller puts the guard in front).
 * Loaded on the first dashboard request: its UI stack costs a web node ~8 MB it need not carry
 * until an operator looks.
 */
export function dashboardMiddleware(queues: Queue[]): Middleware {
  let board: Promise<Middleware> | undefined;
  const load = async (): Promise<Middleware> => {
    const [{ createBullBoard }, { BullMQAdapter }, { KoaAdapter }] = await Promise.all([
      import('@bull-board/api'),
      import('@bull-board/api/bullMQAdapter'),
      import('@bull-board/koa'),
    ]);
    const adapter = new KoaAdapter();
    adapter.setBasePath(DASHBOARD_PATH);
    // @bull-board/koa carries its own copy of @bull-board/api whose types differ only nominally
    type ServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];
    createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: adapter as unknown as ServerAdapter });
    return adapter.registerPlugin() as unknown as Middleware;
  };
  return async (ctx: ParameterizedContext, next: Next): Promise<void> => {
    board ??= load().catch((err: unknown) => {
      board = undefined; // try again on the next request
      throw err;
    });
    await (await board)(ctx, next);
    if (typeof ctx.body === 'string' && ctx.response.is('html')) {
      ctx.body = ctx.body.replace(THIRD_PARTY_LINK, '');
      ctx.set('Content-Security-Policy', PAGE_POLICY);
    }
  };
}
