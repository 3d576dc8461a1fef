import type { Client } from 'oidc-provider';
import { BRAND_COLOUR_PATTERN, type Brand } from '../demo/brand.js';

/** The client metadata, beyond the standard `client_name` and `logo_uri`, that brands its login page. */
export const BRAND_METADATA = ['brand_color', 'brand_background_color'];

/** How the login page looks for this client: its name, logo and colours from its registration. */
export function brandOf(client: Client | undefined): Brand {
  const meta = (client?.metadata() ?? {}) as Record<string, unknown>;
  const text = (key: string): string | undefined => (typeof meta[key] === 'string' && meta[key] !== '' ? (meta[key] as string) : undefined);
  const colour = (key: string): string | undefined => {
    const v = text(key);
    return v && BRAND_COLOUR_PATTERN.test(v) ? v : undefined;
  };
  return {
    name: text('client_name') ?? client?.clientId ?? 'the application',
    logoUri: text('logo_uri'),
    colour: colour('brand_color'),
    background: colour('brand_background_color'),
  };
}
