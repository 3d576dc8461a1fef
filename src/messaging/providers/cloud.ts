import { postJson, type MessagingProvider } from './provider.js';

/**
 * WhatsApp Cloud API: `POST {GRAPH_API_URL}/{phone number id}/messages`, bearer token,
 * `{messaging_product: "whatsapp", to, type: "text", text: {body}}`.
 */
export class CloudProvider implements MessagingProvider {
  readonly name = 'cloud';
  constructor(private readonly opts: { graphApiUrl: string; token: string; phoneNumberId: string; timeoutMs: number }) {}

  async send(to: string, text: string): Promise<{ providerMessageId: string | null }> {
    const url = `${this.opts.graphApiUrl}/${encodeURIComponent(this.opts.phoneNumberId)}/messages`;
    const body = await postJson(
      url,
      { authorization: `Bearer ${this.opts.token}` },
      { messaging_product: 'whatsapp', recipient_type: 'individual', to: to.replace(/^\+/, ''), type: 'text', text: { body: text } },
      this.opts.timeoutMs,
      describe,
    );
    const messages = typeof body === 'object' && body !== null ? (body as { messages?: { id?: unknown }[] }).messages : undefined;
    const id = Array.isArray(messages) ? messages[0]?.id : undefined;
    return { providerMessageId: typeof id === 'string' ? id : null };
  }
}

/** Graph API errors: `{error: {code, message, error_data: {details}}}`; 131047 is the 24-hour window. */
function describe(_status: number, body: unknown): string {
  const err = typeof body === 'object' && body !== null ? (body as { error?: { code?: unknown; message?: unknown } }).error : undefined;
  if (err?.code === 131047) {
    return 'outside the 24-hour customer service window: the person must message first (or use a template)';
  }
  if (err && typeof err.message === 'string') return `${String(err.code ?? '')} ${err.message}`.trim().slice(0, 300);
  return typeof body === 'string' ? body.slice(0, 300) : 'error';
}
