import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

/**
 * What a gateway said about one of its numbers: Evolution `connection.update` (by instance), a
 * Cloud API `account_update` / `phone_number_quality_update` webhook (by display phone number,
 * the only thing those carry), or a send error meaning the number is restricted or banned.
 */
export interface HealthReport {
  /** `evolution:<instance>`, `cloud:<phone_number_id>`; absent when only the phone is known */
  channel?: string;
  /** digits of the number as Meta displays it (Cloud account and quality webhooks) */
  displayNumber?: string;
  healthy: boolean;
  /** why, as the gateway put it (`close 401`, `FLAGGED`, `131031 ...`) */
  reason: string;
}

export interface ChannelState {
  channel: string;
  healthy: boolean;
  reason: string;
  at: number;
}

/** How long a node trusts its last read of the health hash before reading it again. */
const CACHE_MS = 1000;

/**
 * The health of each configured channel, in one Redis hash shared by every node (channel →
 * `{healthy, reason, at}` JSON). A channel nobody reported on is healthy. `writeTo` picks the
 * number the page and the clients are sent to: the first healthy channel in configuration order
 * that has a number to show, else (all down) the first one with a number, so people still have
 * somewhere to write.
 */
export class ChannelHealth {
  private cached: { at: number; states: Map<string, ChannelState> } | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly channels: string[],
    /** channel → the phone number (digits) people write to on it */
    private readonly numbers: ReadonlyMap<string, string>,
  ) {}

  /** The channels a report is about: its own, or those whose number is the one it names. */
  resolve(report: HealthReport): string[] {
    if (report.channel !== undefined) return this.channels.includes(report.channel) ? [report.channel] : [];
    const digits = report.displayNumber?.replace(/\D/g, '');
    if (!digits) return [];
    return this.channels.filter((c) => this.numbers.get(c) === digits);
  }

  /** Records a report on every channel it names; returns those whose state changed. */
  async report(report: HealthReport): Promise<ChannelState[]> {
    const changed: ChannelState[] = [];
    const states = await this.states(true);
    for (const channel of this.resolve(report)) {
      const state: ChannelState = { channel, healthy: report.healthy, reason: report.reason.slice(0, 200), at: Date.now() };
      await this.redis.hset(this.keys.channelHealth(), channel, JSON.stringify({ healthy: state.healthy, reason: state.reason, at: state.at }));
      if (states.get(channel)?.healthy !== report.healthy) changed.push(state);
    }
    this.cached = null;
    return changed;
  }

  /** Every configured channel's state (a channel nobody reported on is healthy). */
  async states(fresh = false): Promise<Map<string, ChannelState>> {
    if (!fresh && this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.states;
    const raw = await this.redis.hgetall(this.keys.channelHealth());
    const states = new Map<string, ChannelState>();
    for (const channel of this.channels) {
      let state: ChannelState = { channel, healthy: true, reason: '', at: 0 };
      try {
        const v = raw[channel] === undefined ? null : (JSON.parse(raw[channel]) as { healthy?: unknown; reason?: unknown; at?: unknown });
        if (v) state = { channel, healthy: v.healthy !== false, reason: String(v.reason ?? ''), at: Number(v.at) || 0 };
      } catch {
        // a value we cannot read counts as no report
      }
      states.set(channel, state);
    }
    this.cached = { at: Date.now(), states };
    return states;
  }

  /** The number (digits) and channel to send people to; null when no channel has a number. */
  async writeTo(): Promise<{ channel: string; number: string } | null> {
    const withNumber = this.channels.filter((c) => this.numbers.has(c));
    if (withNumber.length === 0) return null;
    const states = await this.states();
    const channel = withNumber.find((c) => states.get(c)?.healthy !== false) ?? withNumber[0]!;
    return { channel, number: this.numbers.get(channel)! };
  }
}
