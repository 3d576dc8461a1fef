import type { Logger } from '../../observability/logger.js';
import type { MessagingProvider } from './provider.js';

/** Development provider: records that a message would be sent (never its text). */
export class LogProvider implements MessagingProvider {
  readonly name = 'log';
  constructor(private readonly log: Logger) {}

  send(to: string, text: string): Promise<{ providerMessageId: string | null }> {
    this.log.info('outbound message (log provider)', { toSuffix: to.slice(-4), length: text.length });
    return Promise.resolve({ providerMessageId: null });
  }
}
