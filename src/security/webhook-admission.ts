/** Bytes a node may hold for bodies nobody has vouched for yet, shared by all their requests. */
export interface ByteBudget {
  /** takes `bytes` if that many are left, else takes nothing and answers false */
  take(bytes: number): boolean;
  give(bytes: number): void;
  readonly left: number;
}

/**
 * What the webhook lets strangers cost a web node before anything vouches for them: at most
 * `perGroup` webhook requests in flight from one IP group (IPv6 /64), and at most `unverifiedBytes`
 * of bodies held while they are read before their HMAC is checked, over all requests (headers,
 * tokens and path secrets are checked before the body is read, and cost nothing). In memory,
 * per node: it bounds this process's memory and sockets, which is what a stalled body costs.
 */
export class WebhookAdmission implements ByteBudget {
  private readonly inFlight = new Map<string, number>();
  private held = 0;

  constructor(
    private readonly perGroup: number,
    private readonly unverifiedBytes: number,
  ) {}

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

  get left(): number {
    return this.unverifiedBytes - this.held;
  }

  take(bytes: number): boolean {
    if (this.held + bytes > this.unverifiedBytes) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}
