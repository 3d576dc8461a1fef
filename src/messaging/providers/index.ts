import type { Config } from '../../config.js';
import type { Logger } from '../../observability/logger.js';
import { CloudProvider } from './cloud.js';
import { EvolutionProvider } from './evolution.js';
import { LogProvider } from './log.js';
import type { MessagingProvider } from './provider.js';

/** The sender of each channel, made on first use. */
export interface Senders {
  /**
   * The provider that sends on a channel (`evolution:<instance>`, `cloud:<phone_number_id>`,
   * `log`); null when that channel's gateway is not configured. A channel of a configured
   * gateway that is not listed (a reply to a message that came on another instance or number
   * of the same gateway) is served with the gateway's credentials: the reply must go out where
   * the message came in, never through another number.
   */
  forChannel(channel: string): MessagingProvider | null;
}

export function createSenders(config: Config, log: Logger): Senders {
  const made = new Map<string, MessagingProvider>();
  const logProvider = new LogProvider(log);
  const make = (channel: string): MessagingProvider | null => {
    // no gateway configured (development): everything goes to the log
    if (config.gateways.length === 0) return logProvider;
    const colon = channel.indexOf(':');
    const gateway = colon === -1 ? channel : channel.slice(0, colon);
    const id = channel.slice(colon + 1);
    if (colon === -1 || id === '') return null;
    if (gateway === 'evolution' && config.gateways.includes('evolution')) {
      return new EvolutionProvider({
        url: config.evolution.url!,
        apiKey: config.evolution.apiKey!,
        instance: id,
        apiVersion: config.evolution.apiVersion,
        timeoutMs: config.outboundTimeoutMs,
      });
    }
    if (gateway === 'cloud' && config.gateways.includes('cloud') && /^\d{1,32}$/.test(id)) {
      return new CloudProvider({ graphApiUrl: config.cloud.graphApiUrl, token: config.cloud.token!, phoneNumberId: id, timeoutMs: config.outboundTimeoutMs });
    }
    return null;
  };
  return {
    forChannel(channel) {
      let p = made.get(channel);
      if (p === undefined) {
        const fresh = make(channel);
        if (fresh === null) return null;
        if (made.size > 1000) made.clear();
        p = fresh;
        made.set(channel, p);
      }
      return p;
    },
  };
}
