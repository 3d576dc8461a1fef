import type { Next } from 'koa';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';

export const METRICS_PATH = '/metrics';

/** GET /metrics: Prometheus text from `render`; 503 NETWORK_ERROR while Redis can't answer. */
export function metricsRoute(render: () => Promise<{ contentType: string; text: string }>) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (ctx.path !== METRICS_PATH) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new AppError('METHOD_NOT_ALLOWED');
    }
    let out: { contentType: string; text: string };
    try {
      out = await render();
    } catch (err) {
      throw new AppError('NETWORK_ERROR', undefined, { cause: err });
    }
    ctx.type = out.contentType;
    ctx.body = out.text;
  };
}
