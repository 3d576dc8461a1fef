/**
 * pin-auth's typed client, for browsers and Node (fetch and socket.io-client; nothing from the
 * server's folders). `startLogin()` gives the emoji string to send, a wa.me link with the
 * message typed in, and a promise of the session.
 */
import { randomPin } from './codes.js';
import { PinAuthError } from './errors.js';
import { Http, withRetries } from './http.js';
import { DEFAULT_RETRY_MS, Login } from './login.js';
import type { AccountExport, ClientOptions, ErasureReceipt, LoginStatus, Profile, Session, SessionInfo, StartOptions } from './types.js';

export { PinAuthError, isTransient, SERVICE_ERROR_CODES, type PinAuthErrorCode, type ServiceErrorCode } from './errors.js';
export { chatText, randomEmojiString, randomPin, waLink } from './codes.js';
export type { AccountExport, ClientOptions, ErasureReceipt, LoginStatus, Profile, Session, SessionInfo, StartOptions, User } from './types.js';

/** A login in progress (see Login): what to show, its status, the session to await, cancel. */
export interface LoginAttempt {
  /** the emoji string the person sends */
  readonly emojiString: string;
  /** the whole chat message: `PIN: <emoji string>` */
  readonly text: string;
  /** `https://wa.me/<number>?text=…` when the client knows the service's number */
  readonly waLink: string | undefined;
  /**
   * the number to write to: the one register-pin named (a healthy one of the service's), else
   * the `whatsappNumber` option; undefined when neither is known
   */
  readonly whatsappNumber: string | undefined;
  readonly pinId: string;
  /** seconds the code lives, from registration */
  readonly expiresIn: number;
  readonly status: LoginStatus;
  /** resolves when signed in; rejects with a PinAuthError (PIN_EXPIRED, LOGIN_DENIED, LOGIN_FAILED, CANCELLED, …) */
  readonly session: Promise<Session>;
  /** the listener hears the current status at once (`waiting` at first), then every change; returns its remover */
  onStatus(listener: (status: LoginStatus) => void): () => void;
  cancel(): Promise<void>;
}

/**
 * How long a refresh is retried: a refresh token presented again within the service's
 * REFRESH_REUSE_SECONDS (10 s) of its rotation gets the same new pair; later it is reuse and
 * closes the session, so retries stop well inside that window.
 */
const REFRESH_RETRY_MS = 6_000;

export class PinAuthClient {
  private readonly http: Http;

  constructor(private readonly options: ClientOptions) {
    const base = options.baseUrl.replace(/\/+$/, '');
    this.options = { ...options, baseUrl: base };
    this.http = new Http(base, options.fetch ?? ((input, init) => globalThis.fetch(input, init)));
  }

  /**
   * Registers a new code and starts waiting for it (socket first, polling as fallback). Without
   * `emojiString` the service draws one (the only way under its production default,
   * EMOJI_CHOICE=server); `emojiString` of the attempt shows it.
   */
  async startLogin(opts: StartOptions = {}): Promise<LoginAttempt> {
    const login = new Login(this.http, this.options, opts.pin ?? randomPin(), opts.emojiString);
    try {
      await login.start();
    } catch (err) {
      login.abandon();
      throw err;
    }
    return login;
  }

  /**
   * New tokens for a session: the refresh token rotates (the old one is spent; presenting it
   * again closes the session). Retried after a 503, a 429 or an unreachable service for a few
   * seconds only, inside the service's retry leeway.
   */
  async refresh(session: Session): Promise<Session> {
    const call = () =>
      this.http.request<{ token: string; refreshToken: string }>('POST', '/refresh-token', {
        token: session.token,
        body: { refreshToken: session.refreshToken },
      });
    const r = await withRetries(call, Math.min(REFRESH_RETRY_MS, this.options.retryForMs ?? DEFAULT_RETRY_MS));
    return { ...session, token: r.token, refreshToken: r.refreshToken };
  }

  async profile(session: Session): Promise<Profile> {
    return (await this.http.request<{ user: Profile }>('GET', '/profile', { token: session.token })).user;
  }

  /** The person's open sessions (devices), the current one marked. */
  async sessions(session: Session): Promise<SessionInfo[]> {
    return (await this.http.request<{ sessions: SessionInfo[] }>('GET', '/sessions', { token: session.token })).sessions;
  }

  /** Closes one session by id (another device); SESSION_NOT_FOUND when it is not one of the person's. */
  async endSession(session: Session, id: string): Promise<void> {
    await this.http.request('DELETE', `/sessions/${encodeURIComponent(id)}`, { token: session.token });
  }

  /** Signs out everywhere; resolves with how many sessions were closed. */
  async signOutEverywhere(session: Session): Promise<number> {
    return (await this.http.request<{ closed: number }>('DELETE', '/sessions', { token: session.token })).closed;
  }

  /** A copy of everything the service holds about the person (their right of access and to portability). */
  async exportAccount(session: Session): Promise<AccountExport> {
    return (await this.http.request<{ export: AccountExport }>('GET', '/account/export', { token: session.token })).export;
  }

  /**
   * Erases the person's account: every session ends (this one's tokens too) and every key about
   * them goes; resolves with the receipt. Not retried: once it has gone through, the token is
   * refused (a lost answer shows as AUTHENTICATION_FAILED on a second call, and the account is gone).
   */
  async deleteAccount(session: Session): Promise<ErasureReceipt> {
    return (await this.http.request<{ receipt: ErasureReceipt }>('DELETE', '/account', { token: session.token })).receipt;
  }

  /** Closes the session on the service: its tokens stop working at once (retried like a registration: closing twice is harmless). */
  async logout(session: Session): Promise<void> {
    await withRetries(
      () => this.http.request('POST', '/logout', { token: session.token, body: { userId: session.user.id } }),
      this.options.retryForMs ?? DEFAULT_RETRY_MS,
    );
  }
}

export const isPinAuthError = (err: unknown): err is PinAuthError => err instanceof PinAuthError;
