import type { Config } from '../../config.js';
import type { Logger } from '../../observability/logger.js';
import { CloudProvider } from './cloud.js';
import { EvolutionProvider } from './evolution.js';
import { LogProvider } from './log.js';
import type { MessagingProvider } from './provider.js';

export function createProvider(config: Config, log: Logger): MessagingProvider {
  switch (config.messagingProvider) {
    case 'evolution':
      return new EvolutionProvider({
        url: config.evolution.url!,
        apiKey: config.evolution.apiKey!,
        instance: config.evolution.instance!,
        timeoutMs: config.outboundTimeoutMs,
      });
    case 'cloud':
      return new CloudProvider({
        graphApiUrl: config.cloud.graphApiUrl,
        token: config.cloud.token!,
        phoneNumberId: config.cloud.phoneNumberId!,
        timeoutMs: config.outboundTimeoutMs,
      });
    default:
      return new LogProvider(log);
  }
}
