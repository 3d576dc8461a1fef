import type { RedisClient } from '../redis/connection.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config.js';
import { AppError } from '../errors.js';
import type { Keys } from '../redis/keys.js';
import type { ScriptArg } from '../redis/scripts.js';
import { ipGroup } from './ip-group.js';
import { remembered } from '../remembered.js';

/**
 * Every rate limit of the service. The budgets of the login endpoints (registrations, checks,
 * checks of one PIN, wrong guesses) are checked and spent inside the Lua steps that do the
 * work (src/redis/scripts/lib/budgets.lua; on one Redis one script, one round trip), so no
 * burst gets more than a budget's worth. An IP group's budgets share a slot; a PIN's budget
 * shares the registration's (keys.ts), so on a cluster they are spent in separate steps. Per-IP budgets are per IP group (IPv6 /64 by default, see
 * ip-group.ts). send-message, chat replies, chat messages per sender and the OpenID provider's doors spend one budget
 * each, without further work to tie to it, so rate-limiter-flexible's atomic consume serves them; the socket event budget
 * belongs to one connection and lives in memory.
 */
export type BudgetName = 'register' | 'check' | 'checkPin' | 'guess';
/** Limits that spend one budget with no work to tie to it (the OpenID ones: per IP group). */
export type PlainLimit = 'send' | 'reply' | 'sender' | 'oidcAuthorize' | 'oidcInteraction' | 'adminAction';
export type LimitName = BudgetName | PlainLimit;

interface BudgetSpec {
  /** key segment under `<prefix>:rl:` (kept from the earlier rate-limiter-flexible keys) */
  key: string;
  /** whose budget: an IP group's (all of one group share a slot) or one PIN's (the registration's slot) */
  of: 'group' | 'pin';
  points: number;
  windowMs: number;
  /** 't' spent by every request; 'g' a wrong-guess budget: held while the guess is judged, kept on a miss */
  mode: 't' | 'g';
}

/**
 * The budgets of one request, split by slot (lib/budgets.lua describes the arguments): the IP
 * group's (budget-take, budget-settle) and the PIN's (spent by the registration's step), with
 * what a refusal needs to say.
 */
export interface BudgetSet {
  /** the client's IP group (logs) */
  group: string;
  names: readonly BudgetName[];
  groupKeys: string[];
  /** the group budgets' description (lib/budgets.lua): the same array for every request of a kind (read-only) */
  groupArgs: readonly ScriptArg[];
  /** the mode of each group budget, for budget-settle */
  groupModes: readonly ScriptArg[];
  pinKeys: string[];
  pinArgs: readonly ScriptArg[];
}

/** What a kind of request's budgets are, made once: a request adds only its keys. */
interface BudgetTemplate {
  names: readonly BudgetName[];
  /** per budget, in order: whose it is and its key segment */
  entries: readonly BudgetSpec[];
  groupArgs: readonly ScriptArg[];
  groupModes: readonly ScriptArg[];
  pinArgs: readonly ScriptArg[];
}

const REFUSALS: Record<BudgetName, string> = {
  register: 'Too many registrations from this network',
  check: 'Too many checks from this network',
  checkPin: 'This PIN is checked too often; slow down',
  guess: 'Too many wrong guesses from this network',
};

/** Client addresses whose group is remembered: a node sees the same few addresses again and again (proxies, NAT). */
const GROUPS_REMEMBERED = 4096;

export class Limits {
  private readonly specs: Record<BudgetName, BudgetSpec>;
  /** The network a client address counts under, remembered (ipGroup parses IPv6 text: a tenth of a polled request's CPU before). */
  readonly group: (ip: string) => string;
  private readonly plain: Record<PlainLimit, RateLimiterRedis>;
  private readonly templates: Record<'register' | 'check' | 'cancel' | 'none', BudgetTemplate>;

  constructor(
    redis: RedisClient,
    private readonly keys: Keys,
    private readonly cfg: RateLimitConfig,
  ) {
    this.group = remembered((ip) => ipGroup(ip, cfg.ipv6PrefixLength), GROUPS_REMEMBERED);
    this.specs = {
      register: { key: 'register', of: 'group', points: cfg.registerPerMinute, windowMs: 60_000, mode: 't' },
      check: { key: 'check', of: 'group', points: cfg.checkPerMinute, windowMs: 60_000, mode: 't' },
      // about one check a second per PIN with a small burst (RFC 8628's slow_down)
      checkPin: {
        key: 'checkpin',
        of: 'pin',
        points: cfg.checkPinBurst,
        windowMs: 1000 * Math.max(1, Math.round(cfg.checkPinBurst / cfg.checkPinPerSecond)),
        mode: 't',
      },
      guess: { key: 'unknownpin', of: 'group', points: cfg.unknownPinPer10Minutes, windowMs: 600_000, mode: 'g' },
    };
    const make = (name: string, points: number, duration: number): RateLimiterRedis =>
      new RateLimiterRedis({ storeClient: redis, keyPrefix: keys.rateLimit(name), points, duration, useRedisPackage: false });
    this.plain = {
      send: make('send', cfg.sendPerMinute, 60),
      reply: make('reply', cfg.replyPerMinute, 60),
      // 0 turns the sender budget off (its caller does not spend it); the limiter needs a point
      sender: make('sender', Math.max(1, cfg.senderMessagesPerMinute), 60),
      oidcAuthorize: make('oidcauth', cfg.oidcAuthorizePerMinute, 60),
      oidcInteraction: make('oidcpage', cfg.oidcInteractionPerMinute, 60),
      // every admin API request, per actor (`admin:<userId>`, `key:<keyId>`): docs/accounts.md
      adminAction: make('adminact', cfg.adminActionsPerMinute, 60),
    };
    this.templates = {
      register: this.template(['register']),
      check: this.template(['check', 'checkPin', 'guess']),
      cancel: this.template(['register', 'guess']),
      none: this.template([]),
    };
  }

  /** register-pin: the group's registrations. */
  forRegister(group: string): BudgetSet {
    return this.budgets(this.templates.register, group, '');
  }

  /** check-login: the group's checks, the PIN's checks, the group's wrong guesses. */
  forCheck(group: string, pinHash: string): BudgetSet {
    return this.budgets(this.templates.check, group, pinHash);
  }

  /** socket cancel-auth: the group's registrations (it answers the same question), wrong guesses. */
  forCancel(group: string): BudgetSet {
    return this.budgets(this.templates.cancel, group, '');
  }

  /** No budget at all (a request the server makes for itself). */
  none(): BudgetSet {
    return this.budgets(this.templates.none, '', '');
  }

  /** The arguments of a list of budgets (lib/budgets.lua): the index names the budget in a refusal. */
  private template(names: BudgetName[]): BudgetTemplate {
    const t = { names, entries: names.map((n) => this.specs[n]), groupArgs: [] as ScriptArg[], groupModes: [] as ScriptArg[], pinArgs: [] as ScriptArg[] };
    t.entries.forEach((s, i) => {
      const spec = [s.points, s.windowMs, s.mode, i + 1];
      if (s.of === 'pin') {
        t.pinArgs.push(...spec);
      } else {
        t.groupArgs.push(...spec);
        t.groupModes.push(s.mode);
      }
    });
    t.groupArgs.unshift(t.groupArgs.length / 4);
    t.pinArgs.unshift(t.pinArgs.length / 4);
    return t;
  }

  /** A request's budgets: the template's arguments and this group's and PIN's keys. */
  private budgets(t: BudgetTemplate, group: string, pinHash: string): BudgetSet {
    const groupKeys: string[] = [];
    const held: string[] = [];
    const pinKeys: string[] = [];
    for (const s of t.entries) {
      if (s.of === 'pin') pinKeys.push(this.keys.pinBudget(s.key, pinHash));
      else groupKeys.push(this.keys.groupBudget(s.key, group));
      // a wrong-guess budget's points held by requests in flight (lib/budgets.lua)
      if (s.of === 'group' && s.mode === 'g') held.push(this.keys.groupBudget(`${s.key}:held`, group));
    }
    groupKeys.push(...held);
    return { group, names: t.names, groupKeys, groupArgs: t.groupArgs, groupModes: t.groupModes, pinKeys, pinArgs: t.pinArgs };
  }

  /** The error for a script's `{'limited', waitMs, index}` answer, and which budget it was. */
  refusal(set: BudgetSet, waitMs: number, index: number): { limit: BudgetName; error: AppError } {
    const limit = set.names[index - 1] ?? 'register';
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    return { limit, error: new AppError('RATE_LIMITED', REFUSALS[limit], { retryAfter }) };
  }

  /** Spends one point of `name` for `key` (send-message: per user), or throws RATE_LIMITED. */
  async consume(name: PlainLimit, key: string): Promise<void> {
    try {
      await this.plain[name].consume(key);
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        throw new AppError('RATE_LIMITED', undefined, { retryAfter: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) });
      }
      throw err;
    }
  }

  /** Spends one point, reporting instead of throwing (worker side: chat replies per phone). */
  async tryConsume(name: PlainLimit, key: string): Promise<boolean> {
    try {
      await this.plain[name].consume(key);
      return true;
    } catch (err) {
      if (err instanceof RateLimiterRes) return false;
      throw err;
    }
  }

  /**
   * Spends one point, reporting instead of throwing, and whether this is the window's first
   * refusal (the one a person is told of: chat messages per sender).
   */
  async spend(name: PlainLimit, key: string): Promise<'spent' | 'first-refusal' | 'refused'> {
    try {
      await this.plain[name].consume(key);
      return 'spent';
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return err.consumedPoints === this.plain[name].points + 1 ? 'first-refusal' : 'refused';
    }
  }

  /** A per-connection budget for socket events, in memory (a connection lives on one node). */
  socketBudget(): RateLimiterMemory {
    return new RateLimiterMemory({ points: this.cfg.socketEventsPerSecond, duration: 1 });
  }
}
