import { postJson, type MessagingProvider } from './provider.js';

/** Evolution API v2: `POST {url}/message/sendText/{instance}`, header `apikey`, body `{number, text}`. */
export class EvolutionProvider implements MessagingProvider {
  readonly name = 'evolution';
  constructor(private readonly opts: { url: string; apiKey: string; instance: string; timeoutMs: number }) {}

  async send(to: string, text: string): Promise<{ providerMessageId: string | null }> {
    const url = `${this.opts.url}/message/sendText/${encodeURIComponent(this.opts.instance)}`;
    const body = await postJson(
      url,
      { apikey: this.opts.apiKey },
      { number: to.replace(/^\+/, ''), text },
      this.opts.timeoutMs,
      describe,
    );
    const key = typeof body === 'object' && body !== null ? (body as { key?: { id?: unknown } }).key : undefined;
    return { providerMessageId: typeof key?.id === 'string' ? key.id : null };
  }
}

function describe(_status: number, body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const r = (body as { response?: { message?: unknown } }).response;
    if (r && r.message !== undefined) return JSON.stringify(r.message).slice(0, 300);
  }
  return typeof body === 'string' ? body.slice(0, 300) : 'error';
}
