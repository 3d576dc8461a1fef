/**
 * A browser's part of an OpenID login, over plain HTTP: follows redirects by hand, keeps the
 * provider's cookies, reads the chat code off the interaction page and polls its status.
 */
export class Browser {
  private readonly jar = new Map<string, string>();

  async get(url: string): Promise<Response> {
    return this.send(url, { method: 'GET' });
  }

  async postForm(url: string, form: Record<string, string>): Promise<Response> {
    return this.send(url, { method: 'POST', body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  /** The Cookie header this browser sends (every cookie it holds). */
  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private async send(url: string, init: { method: string; body?: string; headers?: Record<string, string> }): Promise<Response> {
    const cookie = this.cookieHeader();
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), ...(cookie ? { cookie } : {}) },
      signal: AbortSignal.timeout(15000),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now()) || value === '';
      if (expired) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects until a response is not one, or its location starts with `stopAt`; returns the last response and URL. */
  async follow(url: string, stopAt: string): Promise<{ res: Response; url: string }> {
    let current = url;
    for (let i = 0; i < 10; i++) {
      const res = await this.get(current);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { res, url: current };
      current = new URL(location, current).href;
      if (current.startsWith(stopAt)) return { res, url: current };
    }
    throw new Error(`too many redirects from ${url}`);
  }
}
