import { describeGraphError, isNumberDownGraphError, isTransientGraphError, type GraphError } from '../graph-errors.js';
import type { ChatButton } from '../../chat/message.js';
import { bodySnippet, postJson, type FailureDescription, type MessagingProvider } from './provider.js';

/**
 * WhatsApp Cloud API: `POST {GRAPH_API_URL}/{phone number id}/messages`, bearer token,
 * `{messaging_product: "whatsapp", to, type: "text", text: {body}}`; to a sender known only by
 * a business-scoped user id (`user:<id>`), `recipient: <id>` instead of `to`. With buttons, an
 * interactive reply-buttons message instead: `{type: "interactive", interactive: {type: "button",
 * body: {text}, action: {buttons: [{type: "reply", reply: {id, title}}]}}}` (at most 3 buttons,
 * titles of at most 20 characters, a body of at most 1024).
 */
const MAX_INTERACTIVE_BODY = 1024;
/** How an outbound job addresses a business-scoped user id rather than a phone. */
export const USER_PREFIX = 'user:';

export class CloudProvider implements MessagingProvider {
  readonly name = 'cloud';
  constructor(private readonly opts: { graphApiUrl: string; token: string; phoneNumberId: string; timeoutMs: number }) {}

  async send(to: string, text: string, opts: { marker?: string; buttons?: ChatButton[] } = {}): Promise<{ providerMessageId: string | null }> {
    const buttons = opts.buttons !== undefined && opts.buttons.length > 0 && text.length <= MAX_INTERACTIVE_BODY ? opts.buttons.slice(0, 3) : null;
    const url = `${this.opts.graphApiUrl}/${encodeURIComponent(this.opts.phoneNumberId)}/messages`;
    const body = await postJson(
      url,
      { authorization: `Bearer ${this.opts.token}` },
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        ...(to.startsWith(USER_PREFIX) ? { recipient: to.slice(USER_PREFIX.length) } : { to: to.replace(/^\+/, '') }),
        ...(buttons === null
          ? { type: 'text', text: { body: text } }
          : {
              type: 'interactive',
              interactive: {
                type: 'button',
                body: { text },
                action: { buttons: buttons.map((b) => ({ type: 'reply', reply: { id: b.id, title: b.title.slice(0, 20) } })) },
              },
            }),
        // echoed in the status webhooks of this message (at most 512 characters)
        ...(opts.marker !== undefined ? { biz_opaque_callback_data: opts.marker.slice(0, 512) } : {}),
      },
      this.opts.timeoutMs,
      describe,
    );
    const messages = typeof body === 'object' && body !== null ? (body as { messages?: { id?: unknown }[] }).messages : undefined;
    const id = Array.isArray(messages) ? messages[0]?.id : undefined;
    return { providerMessageId: typeof id === 'string' ? id : null };
  }
}

/** Graph API error answers: `{error: {code, message, error_data: {details}}}`; the code decides. */
function describe(_status: number, body: unknown): FailureDescription {
  const err = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof err !== 'object' || err === null) return { reason: bodySnippet(body) };
  const graph = err as GraphError;
  // throughput and pair-rate limits come as HTTP 400: the code says they pass
  if (isTransientGraphError(graph)) return { reason: describeGraphError(graph), retryable: true };
  return isNumberDownGraphError(graph) ? { reason: describeGraphError(graph), unhealthy: true } : { reason: describeGraphError(graph) };
}
