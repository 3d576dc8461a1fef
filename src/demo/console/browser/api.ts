/**
 * The console's door to the admin API: the session of the chat sign-in (kept in this tab's
 * sessionStorage, so a reload keeps it and closing the tab forgets it), its access token sent as
 * `Authorization: Bearer`, and one refresh (POST /refresh-token through the typed client) when
 * the token has expired. Refreshes are shared: requests that fail at once wait for the same one,
 * since presenting a spent refresh token again would close the session (reuse detection).
 */
import { PinAuthClient, type Session } from '@pin-auth/client';

export const ADMIN_API = '/admin/api/v1';
const STORE = 'pin-auth-console-session';

/** An answer of the service's error model (or a network failure: status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class AdminApi {
  readonly client: PinAuthClient;
  private session: Session | undefined;
  private refreshing: Promise<boolean> | undefined;

  constructor(whatsappNumber: string | undefined) {
    this.client = new PinAuthClient({ baseUrl: location.origin, whatsappNumber });
    try {
      const saved = sessionStorage.getItem(STORE);
      if (saved) this.session = JSON.parse(saved) as Session;
    } catch {
      this.session = undefined;
    }
  }

  get signedIn(): Session | undefined {
    return this.session;
  }

  use(session: Session | undefined): void {
    this.session = session;
    try {
      if (session) sessionStorage.setItem(STORE, JSON.stringify(session));
      else sessionStorage.removeItem(STORE);
    } catch {
      // storage refused (private mode): the session lives in memory only
    }
  }

  /** The service's logout, then nothing kept here. */
  async signOut(): Promise<void> {
    const s = this.session;
    this.use(undefined);
    if (s) await this.client.logout(s).catch(() => undefined);
  }

  /**
   * New tokens once for everyone waiting; false when the session is over (sign in again). A call
   * refused with a token already replaced does not refresh again (raw).
   */
  refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      const s = this.session;
      if (!s) return false;
      try {
        this.use(await this.client.refresh(s));
        return true;
      } catch {
        this.use(undefined);
        return false;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** `fetch` of an admin route with the bearer; one refresh and retry after a 401. */
  async raw(path: string, init: RequestInit = {}, retried = false): Promise<Response> {
    const token = this.session?.token;
    if (!token) throw new ApiError(401, 'AUTHENTICATION_FAILED', 'Not signed in');
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    let res: Response;
    try {
      res = await fetch(`${ADMIN_API}${path}`, { ...init, headers, credentials: 'omit', cache: 'no-store' });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new ApiError(0, 'CONNECTION_FAILED', String(err));
    }
    if (res.status === 401 && !retried) {
      // refused with a token another call has refreshed meanwhile: again with the new one
      if (this.session !== undefined && this.session.token !== token) return this.raw(path, init, true);
      if (await this.refresh()) return this.raw(path, init, true);
    }
    return res;
  }

  /** A JSON call; a non-2xx answer becomes an ApiError with the service's code and message. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(path, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let json: unknown;
    try {
      json = await res.json();
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const e = (json ?? {}) as { error?: unknown; message?: unknown };
      throw new ApiError(
        res.status,
        typeof e.error === 'string' ? e.error : `HTTP_${res.status}`,
        typeof e.message === 'string' ? e.message : `HTTP ${res.status}`,
      );
    }
    return json as T;
  }
}
