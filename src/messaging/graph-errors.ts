/**
 * WhatsApp Cloud API (Graph API) error objects, `{code, message, title?, error_data: {details}}`,
 * as the send call answers them and as failed status updates carry them. Meta advises deciding on
 * `code`, not on the HTTP status: its throughput limits come as HTTP 400.
 */
export interface GraphError {
  code?: unknown;
  message?: unknown;
  title?: unknown;
  error_data?: unknown;
}

/** The customer-service window: a free-form message more than 24 hours after the person last wrote. */
export const OUTSIDE_SERVICE_WINDOW = 131047;

/** Codes that a later attempt can get past: rate and throughput limits, temporary faults. */
const TRANSIENT = new Set([1, 2, 4, 80007, 130429, 131000, 131016, 131056, 133004]);

export function isTransientGraphError(err: GraphError): boolean {
  return typeof err.code === 'number' && TRANSIENT.has(err.code);
}

/**
 * Codes that say the sending number itself can't send: 368 temporarily blocked for policy
 * violations, 131031 business account locked, 131042 payment issue, 133010 number not registered.
 */
const NUMBER_DOWN = new Set([368, 131031, 131042, 133010]);

export function isNumberDownGraphError(err: GraphError): boolean {
  return typeof err.code === 'number' && NUMBER_DOWN.has(err.code);
}

/** One line for logs and the dashboard's failed reason. */
export function describeGraphError(err: GraphError): string {
  if (err.code === OUTSIDE_SERVICE_WINDOW) {
    return `${OUTSIDE_SERVICE_WINDOW}: outside the 24-hour customer service window (the person must write first; only a template message can reach them now)`;
  }
  const title = typeof err.message === 'string' ? err.message : typeof err.title === 'string' ? err.title : 'error';
  const data = typeof err.error_data === 'object' && err.error_data !== null ? (err.error_data as { details?: unknown }) : {};
  const details = typeof data.details === 'string' ? `: ${data.details}` : '';
  return `${typeof err.code === 'number' ? `${String(err.code)} ` : ''}${title}${details}`.slice(0, 300);
}
