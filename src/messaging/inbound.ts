import { normaliseCloud } from './inbound-cloud.js';
import { normaliseEvolution } from './inbound-evolution.js';
import { isObj, type Normalised } from './inbound-shapes.js';

export { messageKey, phoneFromJid, type DeliveryStatus, type IgnoreReason, type Normalised, type StatusUpdate } from './inbound-shapes.js';

/**
 * A gateway's webhook body, read: Evolution API events (inbound-evolution.ts) or Meta's
 * webhooks (inbound-cloud.ts). What each shape becomes is described in inbound-shapes.ts.
 */
/** `pathEvent`: the event named by an Evolution by-events path (`/messaging-endpoint/messages-upsert`). */
export function normaliseWebhook(body: unknown, pathEvent?: string): Normalised {
  if (!isObj(body)) return { kind: 'invalid', reason: 'The body must be a JSON object' };
  if (typeof body.object === 'string' && Array.isArray(body.entry)) return normaliseCloud(body, body.entry);
  if (body.object === 'whatsapp_business_account') return { kind: 'invalid', reason: 'Cloud API notification needs entry[]' };
  if ('event' in body || 'data' in body || 'instance' in body) return normaliseEvolution(body, pathEvent);
  return { kind: 'invalid', reason: 'Neither an Evolution API event nor a WhatsApp Cloud API notification' };
}
