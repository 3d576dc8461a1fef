import type { Keys } from '../redis/keys.js';
import type { ClaimReply, Scripts } from '../redis/scripts.js';

/**
 * Runs claim-login.lua, the login's steps (scripts/lib/login-steps.lua): on one server as ONE
 * call that builds every key inside (lib/keys.lua; one round trip, atomic, as the worker's
 * throughput wants); on a Redis Cluster one call per step, each given the keys of its one slot,
 * until a step returns the result. The steps and their order are written once, in Lua; this
 * only turns the (kind, values) a step names into keys with keys.ts.
 */
export interface ClaimState {
  msgId: string;
  nonce: string;
  /** emoji hash of the code ('' for YES / NO) */
  emojiHash: string;
  /** canonical phone, '' when withheld (written on a new account) */
  phone: string;
  /** the sender's identifiers as [kind, value] (a number change's new phone: [kind, value, 'new']), stable kinds first */
  ids: string[][];
  /** who a confirmation question is asked of (the phone, else the first identifier) */
  addr: string;
  /** WhatsApp username, '' when none */
  uname: string;
  newUid: string;
  name: string;
  surname: string;
  newSid: string;
  /** the refresh token id of the session a claim opens */
  newRefreshJti: string;
  sessTtl: number;
  grace: number;
  dedupTtl: number;
  maxSessions: number;
  mode: 'code' | 'yes' | 'no' | 'renumber';
  /** the question an answer names ("YES 47"), '' when it names none */
  question: string;
  /** ms since epoch the message was accepted (InboundJob.receivedAt, kept by retries and replays): an answer answers only questions asked before it */
  receivedAt: number;
  /** 0..89, drawn at random per message: where a new question's number (10..99) is looked for first */
  draw: number;
  confirm: boolean;
}

/** The kinds of key a step names (login-steps.lua), and how each is built from its values (as claim-login.lua does on one server). */
const KINDS: Record<string, (k: Keys, a: string, b: string) => string> = {
  msg: (k, a) => k.message(a),
  emo: (k, a) => k.emoji(a),
  confirm: (k, a) => k.confirmation(a),
  ident: (k, kind, value) => k.identity(kind, value),
  reg: (k, a) => k.registration(a),
  active: (k, h) => k.active(k.activeBucket(h)),
  user: (k, a) => k.user(a),
  usess: (k, a) => k.userSessions(a),
  sess: (k, uid, sid) => k.session(uid, sid),
};

/** the first step (login-steps.lua's chain starts at `msg`): its key is the message's */
const FIRST = 'msg';
/** a chain is ~10 steps; more means a loop, which must not spin for ever */
const MAX_STEPS = 32;

export class LoginChain {
  constructor(
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    /** one call per step (Redis Cluster) instead of the whole chain in one */
    private readonly stepwise: boolean,
  ) {}

  async claim(state: ClaimState): Promise<Exclude<ClaimReply, { kind: 'next' }>> {
    if (!this.stepwise) return this.final(await this.scripts.run('claim-login', [], ['', JSON.stringify(state), this.keys.prefix]));
    let step = FIRST;
    let json = JSON.stringify(state);
    let keys = [this.keys.message(state.msgId)];
    for (let i = 0; i < MAX_STEPS; i++) {
      const out = await this.step(step, keys, json);
      if (out.kind !== 'next') return out;
      ({ step, stateJson: json } = out);
      keys = out.keys.map(([kind, a, b]) => this.keyOf(kind, a, b));
    }
    throw new Error(`login chain did not finish in ${MAX_STEPS} steps`);
  }

  /** One step on its keys (tests interrupt a chain here, as a crash between two steps would). */
  protected step(step: string, keys: string[], json: string): Promise<ClaimReply> {
    return this.scripts.run('claim-login', keys, [step, json]);
  }

  private final(out: ClaimReply): Exclude<ClaimReply, { kind: 'next' }> {
    if (out.kind === 'next') throw new Error('login chain: the whole chain answered with a step');
    return out;
  }

  private keyOf(kind: string, a: string, b: string): string {
    const build = KINDS[kind];
    if (!build) throw new Error(`login chain: unknown key kind ${kind}`);
    return build(this.keys, a, b);
  }
}
