import type { Config } from '../config.js';

/**
 * The start-up banner: what a person needs to see that the process runs as intended (where to
 * open it, which roles, which gateway, which Redis, whether the dashboard and the login page are
 * on, which key prefix), each line only where the role runs it. The Redis address is shown
 * without its user name and password.
 */
/** What a process runs: the Procfile's roles, or every role in one (`npm start`). */
export type Role = 'web' | 'worker' | 'all';

export interface BannerFacts {
  url: string | undefined;
  roles: string;
  provider: string;
  redis: string;
  /** web roles only: a worker serves no HTTP */
  dashboard?: string;
  demo?: string;
  keyPrefix: string;
}

/** host:port/db of a Redis URL, never its credentials. */
export function redisAddress(redisUrl: string): string {
  const u = new URL(redisUrl);
  const db = u.pathname.replace(/^\//, '');
  return `${u.protocol}//${u.hostname}:${u.port || '6379'}${db ? `/${db}` : ''}`;
}

/** The Redis the process uses: one server, a Sentinel-watched primary, or a cluster's seeds. */
export function redisWhere(config: Config): string {
  const r = config.redis;
  const list = (a: { host: string; port: number }[]): string => a.map((x) => `${x.host}:${x.port}`).join(',');
  if (r.kind === 'sentinel') return `primary "${r.name}" through sentinels ${list(r.sentinels)}`;
  if (r.kind === 'cluster') return `cluster through ${list(r.nodes)}`;
  return redisAddress(config.redisUrl);
}

export function bannerFacts(config: Config, role: Role, port: number | undefined): BannerFacts {
  const dashboard = config.adminUser !== undefined && config.adminPassword !== undefined;
  const web = role !== 'worker';
  return {
    url: port === undefined ? undefined : `http://localhost:${port}`,
    roles: role === 'all' ? 'web, worker' : role,
    provider: config.messagingProvider,
    redis: redisWhere(config),
    ...(web && {
      dashboard: dashboard ? 'on at /admin/queues' : 'off (set ADMIN_USER and ADMIN_PASSWORD)',
      demo: config.demo.enabled ? 'on at /' : 'off (DEMO_PAGE=false)',
    }),
    keyPrefix: config.keyPrefix,
  };
}

/** The banner as aligned lines for a terminal. */
export function bannerText(f: BannerFacts): string {
  const rows: [string, string][] = [
    ...(f.url ? ([['URL', `${f.url}  (API reference ${f.url}/docs, OpenAPI ${f.url}/openapi.json)`]] as [string, string][]) : []),
    ['roles', f.roles],
    ['provider', f.provider],
    ['redis', f.redis],
    ...(f.dashboard === undefined ? [] : ([['dashboard', f.dashboard]] as [string, string][])),
    ...(f.demo === undefined ? [] : ([['login page', f.demo]] as [string, string][])),
    ['key prefix', f.keyPrefix],
  ];
  return ['pin-auth started', ...rows.map(([k, v]) => `  ${k.padEnd(11)}${v}`)].join('\n');
}
