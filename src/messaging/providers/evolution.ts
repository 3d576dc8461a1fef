import type { EvolutionApiVersion } from '../../config.js';
import { bodySnippet, postJson, type FailureDescription, type MessagingProvider } from './provider.js';

/**
 * Evolution API: `POST {url}/message/sendText/{instance}`, header `apikey`; body `{number, text}`
 * (v2) or `{number, textMessage: {text}}` (v1, EVOLUTION_API_VERSION=v1). Both answer with the
 * sent message, whose `key.id` is the id its status updates carry.
 */
export class EvolutionProvider implements MessagingProvider {
  readonly name = 'evolution';
  constructor(private readonly opts: { url: string; apiKey: string; instance: string; apiVersion: EvolutionApiVersion; timeoutMs: number }) {}

  async send(to: string, text: string): Promise<{ providerMessageId: string | null }> {
    const url = `${this.opts.url}/message/sendText/${encodeURIComponent(this.opts.instance)}`;
    const number = to.replace(/^\+/, '');
    const body = await postJson(
      url,
      { apikey: this.opts.apiKey },
      this.opts.apiVersion === 'v1' ? { number, textMessage: { text } } : { number, text },
      this.opts.timeoutMs,
      describe,
    );
    const key = typeof body === 'object' && body !== null ? (body as { key?: { id?: unknown } }).key : undefined;
    return { providerMessageId: typeof key?.id === 'string' ? key.id : null };
  }
}

/**
 * Baileys' errors when the WhatsApp socket is down or slow (its `Boom` messages: the socket
 * closed, lost or was terminated, a query timed out, the stream errored). Evolution answers every
 * send error as 400 `{status, error: "Bad Request", response: {message: ["Error: Connection
 * Closed"]}}` (BadRequestException of `error.toString()`), so these texts, not the status, say
 * that a retry will work once the instance reconnects.
 */
const TRANSIENT = /\b(connection (closed|lost|terminated)|timed out|stream errored)\b/i;

/**
 * Evolution's errors: `{status, error, response: {message}}`; an unknown number comes as 400 with
 * `message: [{exists: false, number}]`; a 400 carrying one of Baileys' connection errors is
 * retried like a 5xx.
 */
function describe(status: number, body: unknown): FailureDescription {
  const response = typeof body === 'object' && body !== null ? (body as { response?: { message?: unknown } }).response : undefined;
  const message = response?.message;
  const messages = Array.isArray(message) ? message : [message];
  if (messages.some((m) => typeof m === 'object' && m !== null && (m as { exists?: unknown }).exists === false)) {
    return { reason: 'the number is not on WhatsApp' };
  }
  const reason = bodySnippet(message ?? body);
  if (status === 400 && messages.some((m) => typeof m === 'string' && TRANSIENT.test(m))) return { reason, retryable: true };
  return { reason };
}
