/** Socket.IO event names (spec section 6) and their payloads. */
export const CLIENT_EVENTS = { registerPin: 'register-pin', cancelAuth: 'cancel-auth' } as const;
export const SERVER_EVENTS = {
  pinRegistered: 'pin-registered',
  authSuccess: 'auth-success',
  pinExpired: 'pin-expired',
  pinError: 'pin-error',
} as const;

/** Between servers (adapter / emitter): a registration expired; each node fills in the PIN. */
export const INTERNAL_PIN_EXPIRED = 'internal:pin-expired';

/** The room of a registration's sockets, by PIN hash (known to the web and the worker, not the PIN). */
export const registrationRoom = (pinHash: string): string => `reg:${pinHash}`;
