/**
 * Bytes a node may hold for bodies nobody has vouched for yet, shared by all their requests;
 * `owner` is whose share they count against (an IP group).
 */
export interface ByteBudget {
  /** takes `bytes` for `owner` if that many are left to it, else takes nothing and answers false */
  take(owner: string, bytes: number): boolean;
  give(owner: string, bytes: number): void;
  /** what `owner` may still take */
  left(owner: string): number;
}

/** One IP group may hold this share of the node's unauthenticated bytes (at least one whole body). */
const GROUP_SHARE = 1 / 8;
/** The share of the bytes only networks that have sent an authenticated webhook may hold. */
const KNOWN_SHARE = 1 / 2;
/** How long a network stays known after its last authenticated webhook (ms), and how many are remembered. */
const KNOWN_FOR_MS = 60 * 60 * 1000;
const MAX_KNOWN = 64;

/**
 * What the webhook lets strangers cost a web node before anything vouches for them: at most
 * `perGroup` webhook requests in flight from one IP group (IPv6 /64), and at most
 * `unverifiedBytes` of bodies held while they are read before their HMAC is checked, over all
 * requests, an eighth of it (or one body's limit, if more) per IP group (headers, tokens and path
 * secrets are checked before the body is read, and cost nothing).
 *
 * Half of those bytes are kept for known networks: one that sent an authenticated webhook to
 * this node in the last hour (the gateway's, in practice; the 64 most recent are remembered).
 * Strangers together hold at most the other half, so networks stalling signed bodies that can
 * never match (four fill the strangers' half) leave the gateway's signed webhooks their room. In
 * memory, per node: it bounds this process's memory and sockets, which is what a stalled body costs.
 */
export class WebhookAdmission implements ByteBudget {
  private readonly inFlight = new Map<string, number>();
  /** bytes held per group, and how many of them were taken while the group was a stranger */
  private readonly heldBy = new Map<string, { all: number; stranger: number }>();
  /** known networks, oldest first, with the time they last vouched */
  private readonly known = new Map<string, number>();
  private readonly groupBytes: number;
  private readonly strangerBytes: number;
  private held = 0;
  private strangersHeld = 0;

  constructor(
    private readonly perGroup: number,
    private readonly unverifiedBytes: number,
    bodyLimit: number,
    private readonly now: () => number = Date.now,
  ) {
    this.groupBytes = Math.min(unverifiedBytes, Math.max(bodyLimit, Math.floor(unverifiedBytes * GROUP_SHARE)));
    this.strangerBytes = Math.max(this.groupBytes, Math.floor(unverifiedBytes * (1 - KNOWN_SHARE)));
  }

  /** One more request of `group`, unless it has `perGroup` in flight already; `leave` it once answered. */
  enter(group: string): boolean {
    const n = this.inFlight.get(group) ?? 0;
    if (n >= this.perGroup) return false;
    this.inFlight.set(group, n + 1);
    return true;
  }

  leave(group: string): void {
    const n = this.inFlight.get(group) ?? 1;
    if (n <= 1) this.inFlight.delete(group);
    else this.inFlight.set(group, n - 1);
  }

  /** `group` sent a webhook that authenticated: it is known for the next hour. */
  vouched(group: string): void {
    this.known.delete(group);
    this.known.set(group, this.now());
    if (this.known.size > MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
  }

  isKnown(group: string): boolean {
    const at = this.known.get(group);
    if (at === undefined) return false;
    if (this.now() - at < KNOWN_FOR_MS) return true;
    this.known.delete(group);
    return false;
  }

  left(group: string): number {
    const own = Math.min(this.unverifiedBytes - this.held, this.groupBytes - (this.heldBy.get(group)?.all ?? 0));
    return this.isKnown(group) ? own : Math.min(own, this.strangerBytes - this.strangersHeld);
  }

  take(group: string, bytes: number): boolean {
    if (bytes > this.left(group)) return false;
    const h = this.heldBy.get(group) ?? { all: 0, stranger: 0 };
    h.all += bytes;
    if (!this.isKnown(group)) {
      h.stranger += bytes;
      this.strangersHeld += bytes;
    }
    this.heldBy.set(group, h);
    this.held += bytes;
    return true;
  }

  give(group: string, bytes: number): void {
    this.held -= bytes;
    const h = this.heldBy.get(group);
    if (!h) return;
    // a stranger's bytes are given back first from what it took as one
    const stranger = Math.min(h.stranger, bytes);
    h.stranger -= stranger;
    this.strangersHeld -= stranger;
    h.all -= bytes;
    if (h.all <= 0) this.heldBy.delete(group);
  }
}
