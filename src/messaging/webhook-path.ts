/**
 * The webhook's paths. Besides `/messaging-endpoint` itself:
 * - Evolution's "webhook by events" mode (instance `byEvents`, global `WEBHOOK_GLOBAL_WEBHOOK_BY_EVENTS`)
 *   appends the event name in kebab case: `/messaging-endpoint/messages-upsert`;
 * - a secret path segment (WEBHOOK_PATH_SECRET) for setups that can send no header at all
 *   (Evolution's global webhook): `/messaging-endpoint/<secret>`, and with by-events
 *   `/messaging-endpoint/<secret>/messages-upsert`.
 * Runs of slashes count as one (`oneSlash`). The webhook's Koa route parses the path here, and
 * every log line or metric that names the path uses `label`, which never holds the secret.
 */
export const WEBHOOK_PATH = '/messaging-endpoint';

export interface WebhookRoute {
  /** the segment that may be the path secret (checked by WebhookAuth, constant-time) */
  secretCandidate: string | undefined;
  /** the event named by a by-events suffix, as Evolution names it (`messages.upsert`) */
  event: string | undefined;
  /** the path for logs and metrics: `/messaging-endpoint[/:secret][/<event>]` */
  label: string;
}

/**
 * The events Evolution API names (2.1 to 2.3), as its by-events mode writes them in the URL.
 * Only these are taken for an event suffix; any other segment is a secret (right or wrong) and
 * so never appears in a log line.
 */
const EVOLUTION_EVENTS = new Set(
  [
    'APPLICATION_STARTUP',
    'QRCODE_UPDATED',
    'MESSAGES_SET',
    'MESSAGES_UPSERT',
    'MESSAGES_EDITED',
    'MESSAGES_UPDATE',
    'MESSAGES_DELETE',
    'SEND_MESSAGE',
    'SEND_MESSAGE_UPDATE',
    'CONTACTS_SET',
    'CONTACTS_UPSERT',
    'CONTACTS_UPDATE',
    'PRESENCE_UPDATE',
    'CHATS_SET',
    'CHATS_UPSERT',
    'CHATS_UPDATE',
    'CHATS_DELETE',
    'GROUPS_UPSERT',
    'GROUP_UPDATE',
    'GROUPS_UPDATE',
    'GROUP_PARTICIPANTS_UPDATE',
    'CONNECTION_UPDATE',
    'LABELS_EDIT',
    'LABELS_ASSOCIATION',
    'CALL',
    'TYPEBOT_START',
    'TYPEBOT_CHANGE_STATUS',
    'REMOVE_INSTANCE',
    'LOGOUT_INSTANCE',
    'INSTANCE_CREATE',
    'INSTANCE_DELETE',
    'STATUS_INSTANCE',
    'NEW_JWT_TOKEN',
    'ERRORS',
  ].map((e) => e.toLowerCase().replace(/_/g, '-')),
);
const SEGMENT = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * The path with each run of slashes made one. Evolution's by-events URL is `<webhook url>/<event>`,
 * so a webhook URL configured with a trailing `/` posts to `/messaging-endpoint//messages-upsert`
 * (and Evolution never retries the 404 it would get).
 */
export function oneSlash(path: string): string {
  return path.includes('//') ? path.replace(/\/{2,}/g, '/') : path;
}

/**
 * The route of a request URL under WEBHOOK_PATH, or null when the URL is not the webhook's
 * (another path, more than two segments, or characters no secret or event has).
 */
export function parseWebhookPath(url: string | undefined): WebhookRoute | null {
  if (url === undefined || !url.startsWith(WEBHOOK_PATH)) return null;
  const q = url.indexOf('?');
  const path = oneSlash(q === -1 ? url : url.slice(0, q));
  if (path.length === WEBHOOK_PATH.length) return { secretCandidate: undefined, event: undefined, label: WEBHOOK_PATH };
  if (path[WEBHOOK_PATH.length] !== '/') return null;
  const segments = path.slice(WEBHOOK_PATH.length + 1).split('/');
  if (segments[segments.length - 1] === '') segments.pop();
  if (segments.length > 2 || !segments.every((s) => SEGMENT.test(s))) return null;
  const last = segments[segments.length - 1];
  const eventSegment = last !== undefined && EVOLUTION_EVENTS.has(last) ? last : undefined;
  const rest = eventSegment === undefined ? segments : segments.slice(0, -1);
  if (rest.length > 1) return null;
  const secretCandidate = rest[0];
  const label = WEBHOOK_PATH + (secretCandidate !== undefined ? '/:secret' : '') + (eventSegment !== undefined ? `/${eventSegment}` : '');
  return { secretCandidate, event: eventSegment?.replace(/-/g, '.'), label };
}

/** A path for log lines: the webhook's label when it is under WEBHOOK_PATH, else the path itself. */
export function loggablePath(path: string): string {
  if (!path.startsWith(`${WEBHOOK_PATH}/`)) return path;
  return parseWebhookPath(path)?.label ?? `${WEBHOOK_PATH}/:other`;
}
