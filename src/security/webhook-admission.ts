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

/**
 * What the webhook lets strangers cost a web node before anything vouches for them: at most
 * `perGroup` webhook requests in flight from one IP group (IPv6 /64), and at most
 * `unverifiedBytes` of bodies held while they are read before their HMAC is checked, over all
 * requests, an eighth of it (or one body's limit, if more) per IP group, so filling it takes
 * eight networks (headers, tokens and path secrets are checked before the body is read, and cost
 * nothing). In memory, per node: it bounds this process's memory and sockets, which is what a
 * stalled body costs.
 */
export class WebhookAdmission implements ByteBudget {
  private readonly inFlight = new Map<string, number>();
  private readonly heldBy = new Map<string, number>();
  private readonly groupBytes: number;
  private held = 0;

  constructor(
    private readonly perGroup: number,
    private readonly unverifiedBytes: number,
    bodyLimit: number,
  ) {
    this.groupBytes = Math.min(unverifiedBytes, Math.max(bodyLimit, Math.floor(unverifiedBytes * GROUP_SHARE)));
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

  left(group: string): number {
    return Math.min(this.unverifiedBytes - this.held, this.groupBytes - (this.heldBy.get(group) ?? 0));
  }

  take(group: string, bytes: number): boolean {
    if (bytes > this.left(group)) return false;
    this.held += bytes;
    this.heldBy.set(group, (this.heldBy.get(group) ?? 0) + bytes);
    return true;
  }

  give(group: string, bytes: number): void {
    this.held -= bytes;
    const n = (this.heldBy.get(group) ?? bytes) - bytes;
    if (n <= 0) this.heldBy.delete(group);
    else this.heldBy.set(group, n);
  }
}
