import type { WebMetrics } from '../../observability/metrics.js';
import type { AppHooks } from '../app.js';
import type { AppContext } from '../context.js';
import { loggablePath, WEBHOOK_PATH } from '../../messaging/webhook-path.js';
import { DASHBOARD_PATH, isDashboardPath } from './dashboard.js';

/**
 * The route label of a request: the router's template (`/check-login`), the webhook's by its
 * path's label (`/messaging-endpoint/:secret/messages-upsert`: webhook-path.ts), the dashboard as
 * one route, anything else `unmatched`. Never the raw URL, whose values a client chooses freely.
 */
export function routeLabel(ctx: AppContext): string {
  // @koa/router's documented `ctx.routerPath`: the matched route's template (unset when none matched)
  const matched = (ctx as { routerPath?: unknown }).routerPath;
  if (typeof matched === 'string') return matched.startsWith(WEBHOOK_PATH) ? loggablePath(ctx.path) : matched;
  if (isDashboardPath(ctx.path)) return DASHBOARD_PATH;
  if (ctx.path === '/metrics') return '/metrics';
  return 'unmatched';
}

/** The AppHooks that feed the web metrics: request durations and the webhook's refusals. */
export function metricsHooks(metrics: WebMetrics): Required<Pick<AppHooks, 'onRequest' | 'webhook'>> {
  return {
    onRequest: (ctx, seconds) => metrics.requestDone(ctx.method, routeLabel(ctx), ctx.status, seconds),
    webhook: {
      onRejected: () => metrics.webhookRejected(),
      onRefused: (reason) => metrics.webhookRefused(reason),
      onIgnored: (reason) => metrics.webhookIgnored(reason),
      onDropped: (reason) => metrics.webhookDropped(reason),
      onStatus: (update, result) => metrics.deliveryStatus(update.channel.split(':')[0]!, update.status, result),
      onInbound: (channel) => metrics.channelMessage(channel, 'in'),
      onPriced: (u, of) => metrics.replyPriced(of.kind, u.channel, of.country, u.pricing),
    },
  };
}
