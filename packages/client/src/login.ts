import { io, type Socket } from 'socket.io-client';
import { chatText, waLink } from './codes.js';
import { PinAuthError, type PinAuthErrorCode } from './errors.js';
import type { Http } from './http.js';
import type { ClientOptions, LoginStatus, Session } from './types.js';

interface Registered {
  pinId: string;
  expiresIn: number;
  emojiString?: string;
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
const ENDS: Partial<Record<PinAuthErrorCode, LoginStatus>> = {
  PIN_EXPIRED: 'expired',
  LOGIN_DENIED: 'denied',
  LOGIN_FAILED: 'failed',
  PIN_NOT_FOUND: 'failed',
  CANCELLED: 'cancelled',
};

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * One login in progress: registered over the socket when it connects in time (else over HTTP),
 * then finished by whichever comes first, the socket's `auth-success` or check-login polling.
 * Polling runs only while the socket is not connected, and honours `Retry-After` on 429 and
 * 503. After a reconnect the socket re-joins (register-pin again with the same PIN and emoji
 * string, which the service treats as idempotent and answers with the result if it came
 * meanwhile).
 */
export class Login {
  emojiString: string;
  pinId = '';
  expiresIn = 0;
  status: LoginStatus = 'waiting';
  readonly session: Promise<Session>;

  private resolveSession!: (s: Session) => void;
  private rejectSession!: (e: PinAuthError) => void;
  private readonly listeners = new Set<(s: LoginStatus) => void>();
  private readonly stop = new AbortController();
  private socket: Socket | undefined;
  private polling = false;
  private registered = false;

  constructor(
    private readonly http: Http,
    private readonly opts: ClientOptions,
    private readonly pin: string,
    emojiString: string,
  ) {
    this.emojiString = emojiString;
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
    return waLink(this.opts.whatsappNumber, this.text);
  }

  get done(): boolean {
    return this.stop.signal.aborted;
  }

  onStatus(listener: (s: LoginStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Registers the PIN; resolves once the service has it (the session promise then runs on). */
  async start(): Promise<void> {
    const socket = this.opts.transport === 'polling' ? undefined : await this.connect();
    const answer = socket?.connected ? await this.registerBySocket(socket) : await this.http.request<Registered>('POST', '/register-pin', { body: { pin: this.pin, emojiString: this.emojiString } });
    this.registered = true;
    this.pinId = answer.pinId;
    this.expiresIn = answer.expiresIn;
    if (answer.emojiString) this.emojiString = answer.emojiString;
    if (!socket?.connected) void this.poll();
  }

  /** Cancels the login: the service forgets the registration (over the socket when connected) and the session promise rejects with CANCELLED. */
  async cancel(): Promise<void> {
    if (this.done) return;
    const socket = this.socket;
    if (socket?.connected) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 3000);
        socket.emit('cancel-auth', { pin: this.pin }, () => (clearTimeout(t), resolve()));
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
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
  }

  /** Resolves once connected, or after connectTimeoutMs with the socket still trying in the background. */
  private async connect(): Promise<Socket> {
    const socket = io(this.opts.baseUrl, { transports: ['websocket'], reconnectionDelayMax: 2000 });
    this.socket = socket;
    socket.on('connect', () => {
      // a reconnect: re-join, and let the socket take over from polling
      if (this.registered && !this.done) {
        this.polling = false;
        socket.emit('register-pin', { pin: this.pin, emojiString: this.emojiString });
      }
    });
    socket.on('disconnect', () => {
      if (this.registered && !this.done) void this.poll();
    });
    socket.on('auth-success', (s: Session) => this.succeed(s));
    socket.on('awaiting-confirmation', () => this.setStatus('awaiting-confirmation'));
    socket.on('pin-expired', () => this.fail(new PinAuthError('PIN_EXPIRED', 'The code expired', { status: 410 })));
    socket.on('pin-error', (e: { error: PinAuthErrorCode; message: string }) => {
      if (this.registered && ENDS[e.error]) this.fail(new PinAuthError(e.error, e.message));
    });
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, this.opts.connectTimeoutMs ?? 3000);
      socket.once('connect', () => (clearTimeout(t), resolve()));
    });
    return socket;
  }

  private registerBySocket(socket: Socket): Promise<Registered> {
    return new Promise((resolve, reject) => {
      socket.timeout(10_000).emit('register-pin', { pin: this.pin, emojiString: this.emojiString }, (err: Error | null, ack: Ack) => {
        if (err) reject(new PinAuthError('CONNECTION_FAILED', 'No answer to register-pin'));
        else if (ack.success) resolve(ack);
        else reject(new PinAuthError(ack.error, ack.message, { retryAfter: ack.retryAfter }));
      });
    });
  }

  /** check-login until an end, while the socket is not connected. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const every = this.opts.pollIntervalMs ?? 1000;
    let wait = every;
    let failures = 0;
    while (this.polling && !this.done) {
      await sleep(wait, this.stop.signal);
      if (!this.polling || this.done) break;
      wait = every;
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
          wait = Math.min(30_000, every * 2 ** Math.min(failures, 5));
        }
      }
    }
    this.polling = false;
  }
}
