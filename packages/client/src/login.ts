import { io, type Socket } from 'socket.io-client';
import { chatText, randomKey, waLink } from './codes.js';
import { PinAuthError, type PinAuthErrorCode } from './errors.js';
import { withRetries, type Http } from './http.js';
import type { ClientOptions, LoginStatus, Session } from './types.js';

interface Registered {
  pinId: string;
  expiresIn: number;
  emojiString?: string;
  /** the number the service asks people to write to (a healthy one of several) */
  whatsappNumber?: string;
}
type Ack = ({ success: true } & Registered) | { success: false; error: PinAuthErrorCode; message: string; retryAfter?: number };
interface CheckAnswer {
  verified: boolean;
  awaitingConfirmation?: boolean;
  token?: string;
  refreshToken?: string;
  user?: Session['user'];
}

/** Codes that end a login for good, and the status each one means. */
/**
 * Outside a browser, the socket's handshake names the client: ws (socket.io-client's websocket
 * in Node) sends no User-Agent, so the chat's confirmation question could only say "unnamed app".
 * A browser sends its own and ignores these headers.
 */
const nodeVersion = typeof document === 'undefined' ? (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node : undefined;
const SOCKET_HEADERS = nodeVersion ? { extraHeaders: { 'user-agent': `pin-auth-client (Node.js ${nodeVersion})` } } : {};

const ENDS: Partial<Record<PinAuthErrorCode, LoginStatus>> = {
  PIN_EXPIRED: 'expired',
  LOGIN_DENIED: 'denied',
  LOGIN_FAILED: 'failed',
  PIN_NOT_FOUND: 'failed',
  CANCELLED: 'cancelled',
};

/** Registration retries give up after this long by default (ClientOptions.retryForMs). */
export const DEFAULT_RETRY_MS = 30_000;
/** Check-login while the socket is connected, for a result its node missed (ClientOptions.recheckIntervalMs). */
const DEFAULT_RECHECK_MS = 15_000;
/**
 * Longest wait between checks after failures: a verified answer lost on the way is handed out
 * again for 20 s (the service's COLLECT_RETRY_SECONDS), so the next check must come sooner.
 */
const MAX_BACKOFF_MS = 8_000;

/**
 * One login in progress: registered over the socket when it connects in time (else over HTTP),
 * then finished by whichever comes first, the socket's `auth-success` or check-login polling.
 * The registration carries an Idempotency-Key made for this attempt, and is sent again with it
 * after a 503, a 429, an unreachable service or a lost answer (Retry-After honoured), so a retry
 * of an applied registration gets the same one. Check-login is polled every `pollIntervalMs`
 * while the socket is not connected, and every `recheckIntervalMs` while it is (a result
 * published while the node was cut off from Redis never reaches the socket). After a reconnect
 * the socket re-joins (register-pin again with the same PIN, emoji string and key, which the
 * service answers with the result if it came meanwhile).
 */
export class Login {
  emojiString: string;
  pinId = '';
  expiresIn = 0;
  /** the number to write to: the service's answer's, else the client's `whatsappNumber` option */
  whatsappNumber: string | undefined;
  status: LoginStatus = 'waiting';
  readonly session: Promise<Session>;

  private resolveSession!: (s: Session) => void;
  private rejectSession!: (e: PinAuthError) => void;
  private readonly listeners = new Set<(s: LoginStatus) => void>();
  private readonly stop = new AbortController();
  private socket: Socket | undefined;
  private polling = false;
  private registered = false;
  /** ends the poll loop's current wait early (the socket dropped: poll fast now) */
  private wake: (() => void) | undefined;
  /** names this registration attempt: the same on every retry and re-join */
  private readonly idempotencyKey = randomKey();

  /** `emojiString` undefined: the service draws one (and shows it in its answer) */
  constructor(
    private readonly http: Http,
    private readonly opts: ClientOptions,
    private readonly pin: string,
    chosen: string | undefined,
  ) {
    this.emojiString = chosen ?? '';
    this.whatsappNumber = opts.whatsappNumber;
    this.session = new Promise<Session>((resolve, reject) => {
      this.resolveSession = resolve;
      this.rejectSession = reject;
    });
    // a caller that never awaits the session must not crash Node with an unhandled rejection
    this.session.catch(() => undefined);
  }

  get text(): string {
    return chatText(this.emojiString);
  }

  get waLink(): string | undefined {
    return waLink(this.whatsappNumber, this.text);
  }

  get done(): boolean {
    return this.stop.signal.aborted;
  }

  /** Calls the listener with the current status at once, then with every change; returns its remover. */
  onStatus(listener: (s: LoginStatus) => void): () => void {
    this.listeners.add(listener);
    listener(this.status);
    return () => this.listeners.delete(listener);
  }

  /**
   * Registers the PIN; resolves once the service has it (the session promise then runs on).
   * Each try goes over the socket while it is connected, else over HTTP.
   */
  async start(): Promise<void> {
    const socket = this.opts.transport === 'polling' ? undefined : await this.connect();
    const answer = await withRetries(
      () =>
        socket?.connected
          ? this.registerBySocket(socket)
          : this.http.request<Registered>('POST', '/register-pin', { body: this.registration(false), idempotencyKey: this.idempotencyKey }),
      this.opts.retryForMs ?? DEFAULT_RETRY_MS,
      this.stop.signal,
    );
    this.registered = true;
    this.pinId = answer.pinId;
    this.expiresIn = answer.expiresIn;
    if (answer.emojiString) this.emojiString = answer.emojiString;
    if (answer.whatsappNumber) this.whatsappNumber = answer.whatsappNumber;
    void this.poll();
  }

  /**
   * register-pin's payload: the PIN, the emoji string (the caller's; after registering, the one
   * shown, to re-join; none: the service draws one), and over the socket the key.
   */
  private registration(withKey: boolean): Record<string, string> {
    const { pin, emojiString, idempotencyKey } = this;
    return { pin, ...(emojiString ? { emojiString } : {}), ...(withKey ? { idempotencyKey } : {}) };
  }

  /** Cancels the login: the service forgets the registration (over the socket when connected) and the session promise rejects with CANCELLED. */
  async cancel(): Promise<void> {
    if (this.done) return;
    const socket = this.socket;
    if (socket?.connected) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 3000);
        socket.emit('cancel-auth', { pin: this.pin }, () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    this.fail(new PinAuthError('CANCELLED', 'The login was cancelled'));
  }

  /** Stops listening and polling without telling the service (the registration never happened). */
  abandon(): void {
    this.finish();
  }

  private setStatus(status: LoginStatus): void {
    if (this.status === status) return;
    this.status = status;
    for (const l of this.listeners) l(status);
  }

  private succeed(session: Session): void {
    if (this.done) return;
    this.finish();
    this.setStatus('signed-in');
    this.resolveSession({ token: session.token, refreshToken: session.refreshToken, user: session.user });
  }

  private fail(err: PinAuthError): void {
    if (this.done) return;
    this.finish();
    this.setStatus(ENDS[err.code] ?? 'failed');
    this.rejectSession(err);
  }

  private finish(): void {
    this.stop.abort();
    this.wake?.();
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
  }

  /** Resolves once connected, or after connectTimeoutMs with the socket still trying in the background. */
  private async connect(): Promise<Socket> {
    const socket = io(this.opts.baseUrl, { transports: ['websocket'], reconnectionDelayMax: 2000, ...SOCKET_HEADERS });
    this.socket = socket;
    socket.on('connect', () => {
      // a reconnect: re-join (the poll loop slows down by itself)
      if (this.registered && !this.done) socket.emit('register-pin', this.registration(true));
    });
    // dropped: poll at the fast pace now rather than after the slow wait
    socket.on('disconnect', () => this.wake?.());
    socket.on('auth-success', (s: Session) => this.succeed(s));
    socket.on('awaiting-confirmation', () => this.setStatus('awaiting-confirmation'));
    socket.on('pin-expired', () => this.fail(new PinAuthError('PIN_EXPIRED', 'The code expired', { status: 410 })));
    socket.on('pin-error', (e: { error: PinAuthErrorCode; message: string }) => {
      if (this.registered && ENDS[e.error]) this.fail(new PinAuthError(e.error, e.message));
    });
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, this.opts.connectTimeoutMs ?? 3000);
      socket.once('connect', () => {
        clearTimeout(t);
        resolve();
      });
    });
    return socket;
  }

  private registerBySocket(socket: Socket): Promise<Registered> {
    return new Promise((resolve, reject) => {
      socket.timeout(10_000).emit('register-pin', this.registration(true), (err: Error | null, ack: Ack) => {
        // no answer in time: it may have been applied; the retry (same key) gets the same registration
        if (err) reject(new PinAuthError('CONNECTION_FAILED', 'No answer to register-pin'));
        else if (ack.success) resolve(ack);
        else reject(new PinAuthError(ack.error, ack.message, { retryAfter: ack.retryAfter }));
      });
    });
  }

  /** Waits `ms`, or less when the login ends or the socket drops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => this.wake?.(), ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  /** How long until the next check: fast without a socket, slow with one (0: none while connected). */
  private pace(): number {
    const every = this.opts.pollIntervalMs ?? 1000;
    if (!this.socket?.connected) return every;
    const slow = this.opts.recheckIntervalMs ?? DEFAULT_RECHECK_MS;
    return slow > 0 ? Math.max(every, slow) : 0;
  }

  /** check-login until an end: often while the socket is not connected, seldom while it is. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const every = this.opts.pollIntervalMs ?? 1000;
    let wait = this.pace();
    let failures = 0;
    while (!this.done) {
      // connected with rechecks off: wait for the socket to drop (or the login to end)
      await this.pause(wait > 0 ? wait : 2 ** 31 - 1);
      if (this.done) break;
      wait = this.pace();
      if (wait === 0) continue;
      try {
        const r = await this.http.request<CheckAnswer>('POST', '/check-login', { body: { pin: this.pin }, signal: this.stop.signal });
        failures = 0;
        if (r.verified) this.succeed(r as Session);
        else this.setStatus(r.awaitingConfirmation ? 'awaiting-confirmation' : 'waiting');
      } catch (err) {
        if (!(err instanceof PinAuthError) || this.done) continue;
        if (ENDS[err.code]) {
          // the socket may have delivered the result first (the collected result is then 404)
          if (!this.done) this.fail(err);
        } else if (err.retryAfter !== undefined) {
          wait = Math.max(every, err.retryAfter * 1000);
        } else {
          failures += 1;
          wait = Math.min(MAX_BACKOFF_MS, every * 2 ** Math.min(failures, 5));
        }
      }
    }
    this.polling = false;
  }
}
