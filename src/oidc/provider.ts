import { createHmac } from 'node:crypto';
import type { Configuration, default as Provider, KoaContextWithOIDC } from 'oidc-provider';
import { ConfigError, type OidcConfig } from '../config.js';
import { redisFault, toAppError, type AppError } from '../errors.js';
import type { Services } from '../services.js';
import { parseRoles } from '../auth/roles.js';
import { redisAdapterFactory } from './adapter.js';
import { escapeHtml, renderMessagePage } from '../demo/page.js';
import { BRAND_METADATA, brandOf } from './branding.js';

/**
 * "Sign in with WhatsApp" for any app: panva's certified oidc-provider (authorization code with
 * PKCE, refresh with rotation, userinfo, end-session, discovery), signing ID tokens with the
 * same keys as our own tokens, storing everything in Redis, and sending people to our chat
 * login (src/oidc/interaction.ts) whenever it needs to know who they are.
 */
export const INTERACTION_SEGMENT = 'interaction';

/** Keys for the provider's signed cookies: configured, or derived from the PIN-hash key (a server secret). */
export function cookieKeys(services: Services, oidc: OidcConfig): string[] {
  return oidc.cookieKeys ?? [createHmac('sha256', services.config.pinHashKey).update('pin-auth/oidc-cookies/v1').digest('base64url')];
}

/**
 * Length caps of the authorization parameters the provider stores (`PARAM_LIST` of oidc-provider:
 * always recognised, so naming them in `extraParams` adds nothing but the check). Generous for
 * any app (openid-client's state is 43 characters, a JWT `id_token_hint` about a kilobyte),
 * tight enough that a sign-in costs Redis a few kilobytes at most.
 */
export const PARAM_CAPS: Readonly<Record<string, number>> = {
  state: 512,
  nonce: 256,
  login_hint: 256,
  acr_values: 256,
  scope: 512,
  ui_locales: 128,
  claims_locales: 128,
  client_id: 128,
  redirect_uri: 2048,
  request_uri: 512,
  id_token_hint: 4096,
  request: 8192,
  registration: 4096,
  code_challenge: 128,
  code_challenge_method: 16,
  response_type: 64,
  response_mode: 32,
  prompt: 64,
  display: 32,
  max_age: 16,
};

/** How long an OpenID sign-in (interaction) is kept: one chat code's life and two minutes (≥ 2, ≤ 10 minutes). */
export function interactionTtl(pinTtlSeconds: number): number {
  return Math.min(600, Math.max(120, pinTtlSeconds + 120));
}

/**
 * Loaded only when OIDC clients are configured: oidc-provider 9 supports Node 22+ LTS and warns
 * at import on Node 20 (it runs there; the tests pass on 20.20), which a deployment without the
 * provider should never print.
 */
export async function createProvider(services: Services, oidc: OidcConfig): Promise<Provider> {
  const { default: ProviderClass, errors } = await import('oidc-provider');
  const { config, redis, keys, tokens } = services;
  const ring = tokens.keys;
  // the provider's own pages in the login page's look, branded for the client when there is one
  const page = (ctx: KoaContextWithOIDC, title: string, body: string): void => {
    ctx.type = 'html';
    ctx.body = renderMessagePage(brandOf(ctx.oidc?.client), title, body);
  };
  const configuration: Configuration = {
    adapter: redisAdapterFactory(redis, keys, services.oidcLogins),
    clients: oidc.clients,
    // the login page's colours for a client (validated at start, src/config.ts)
    extraClientMetadata: { properties: BRAND_METADATA },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      id_token_signed_response_alg: ring.active.alg,
      token_endpoint_auth_method: 'client_secret_basic',
    },
    jwks: { keys: ring.signingJwks() },
    enabledJWA: { idTokenSigningAlgValues: ['ES256', 'EdDSA'] },
    cookies: { keys: cookieKeys(services, oidc) },
    scopes: ['openid', 'offline_access', 'profile', 'phone', 'roles'],
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name'],
      phone: ['phone_number', 'phone_number_verified'],
      // the account's roles as stored now (docs/accounts.md, "Roles"), for a client that asks for scope `roles`
      roles: ['roles'],
    },
    async findAccount(_ctx, sub) {
      const user = await redis.hgetall(keys.user(sub));
      // a blocked account is no account to the provider: no token, userinfo or refresh for it
      if (!user.id || user.blockedAt) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          name: [user.name, user.surname].filter(Boolean).join(' '),
          given_name: user.name ?? '',
          family_name: user.surname ?? '',
          // only when the account has a phone (someone known by LID or user id alone has none);
          // the number is one a login message came from: WhatsApp vouched for it
          ...(user.phone ? { phone_number: user.phone, phone_number_verified: true } : {}),
          roles: parseRoles(user.roles, ['user']),
        }),
      };
    },
    interactions: { url: (_ctx, interaction) => `${oidc.mountPath}/${INTERACTION_SEGMENT}/${interaction.uid}` },
    // every request parameter the provider keeps (in a sign-in, a pushed request) has a length cap
    extraParams: Object.fromEntries(
      Object.entries(PARAM_CAPS).map(([name, max]) => [
        name,
        (_ctx: KoaContextWithOIDC, value: unknown) => {
          if (typeof value === 'string' && value.length > max) throw new errors.InvalidRequest(`${name} is longer than ${max} characters`);
        },
      ]),
    ),
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) =>
          page(
            ctx,
            'Sign out?',
            `${form}<p class="actions">
              <button autofocus type="submit" form="op.logoutForm" value="yes" name="logout" class="button primary">Yes, sign me out</button>
              <button type="submit" form="op.logoutForm" class="button">No, stay signed in</button>
            </p>`,
          ),
        postLogoutSuccessSource: (ctx) => page(ctx, 'Signed out', '<p>You are signed out.</p>'),
      },
    },
    pkce: { required: () => true },
    // Every client that may use refresh tokens gets one; each use rotates it (reuse revokes the grant).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: config.accessTokenTtl,
      IdToken: config.accessTokenTtl,
      AuthorizationCode: 60,
      // a sign-in page lives for one chat code and its confirmation, then the app starts again:
      // what an address can keep stored is its authorization budget times this
      Interaction: interactionTtl(config.pinTtlSeconds),
      Session: config.refreshTokenTtl,
      Grant: config.refreshTokenTtl,
      RefreshToken: config.refreshTokenTtl,
    },
    renderError: (ctx, out) => page(ctx, 'Sign-in error', `<p><code>${escapeHtml(out.error)}</code> ${escapeHtml(out.error_description ?? '')}</p>`),
  };
  let provider: Provider;
  try {
    provider = new ProviderClass(oidc.issuer, configuration);
  } catch (err) {
    const problem = refusal(err, 'OIDC_CLIENTS');
    throw problem === undefined ? err : new ConfigError(problem);
  }
  // it reads the origin and the client address from the X-Forwarded-* headers, which the mount
  // sets to the issuer's and the address the service took (interaction.ts asIssuersRequest)
  provider.proxy = true;
  // An unreachable store is no fault of the request: 503 with Retry-After, as on every other
  // path. The provider's error handler answers 500 server_error and emits `server_error`; the
  // event notes the cause, and a middleware around the provider's routes (documented
  // `provider.use`) rewrites the answer once the handler has set it.
  const storeFaults = new WeakMap<object, AppError>();
  provider.on('server_error', (ctx, err) => {
    const fault = toAppError(err);
    if (fault.code !== 'NETWORK_ERROR') {
      services.log.error('oidc server error', { error: err.message });
      return;
    }
    services.log.warn('oidc request refused: store unavailable', { fault: redisFault(err) ?? 'other', error: err.message });
    storeFaults.set(ctx, fault);
  });
  provider.use(async (ctx, next) => {
    await next();
    const fault = storeFaults.get(ctx);
    if (fault === undefined) return;
    ctx.status = 503;
    if (fault.retryAfter !== undefined) ctx.set('Retry-After', String(fault.retryAfter));
    if (ctx.type === 'application/json') ctx.body = { error: 'temporarily_unavailable', error_description: fault.message };
  });
  return provider;
}

/**
 * The provider, built on first use (it signs with the key ring, which may load after the process
 * starts) and built again after a build that failed.
 */
export function lazyProvider(services: Services, oidc: OidcConfig): () => Promise<Provider> {
  let provider: Promise<Provider> | undefined;
  return () =>
    (provider ??= createProvider(services, oidc).catch((err: unknown) => {
      provider = undefined;
      throw err;
    }));
}

/**
 * Reads every configured client as the provider does at a sign-in (`Client.find`): metadata it
 * refuses (a redirect URI with a fragment, a response or grant type it does not serve, …) is a
 * ConfigError naming each such client, so a web node stops at start instead of showing the
 * person an error page at the first sign-in.
 */
export async function checkClients(provider: Provider, oidc: OidcConfig): Promise<void> {
  const problems: string[] = [];
  for (const { client_id } of oidc.clients) {
    try {
      await provider.Client.find(client_id);
    } catch (err) {
      const problem = refusal(err, `OIDC client ${client_id}`);
      if (problem === undefined) throw err;
      problems.push(problem);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** The provider's refusal of client metadata (an error with `error_description`) as a problem about `what`; undefined for any other error. */
function refusal(err: unknown, what: string): string | undefined {
  const described = (err as { error_description?: unknown }).error_description;
  return typeof described === 'string' ? `${what}: ${described} (${(err as Error).message})` : undefined;
}
