import type { ErrorCode } from '../errors.js';
import type { LoginResult } from '../registrations/login-result.js';

/** Socket.IO event names and their payloads (README "Real-time events"), as clients see them. */
export const CLIENT_EVENTS = { registerPin: 'register-pin', cancelAuth: 'cancel-auth' } as const;
export const SERVER_EVENTS = {
  pinRegistered: 'pin-registered',
  authSuccess: 'auth-success',
  pinExpired: 'pin-expired',
  pinError: 'pin-error',
  /** the chat code matched; the person is asked to confirm in the chat (LOGIN_CONFIRMATION) */
  awaitingConfirmation: 'awaiting-confirmation',
} as const;

export interface AwaitingConfirmationPayload {
  pinId: string;
}

export interface PinRegisteredPayload {
  pinId: string;
  /** seconds left */
  expiresIn: number;
  /** the emoji string the person must send (the client's own, or the one the server drew) */
  emojiString: string;
  /** the WhatsApp number to send it to (digits, a healthy one); absent when none is configured */
  whatsappNumber?: string;
}

export interface PinErrorPayload {
  error: ErrorCode;
  message: string;
  /** VALIDATION_ERROR: which fields and why */
  details?: unknown;
  /** RATE_LIMITED: seconds to wait */
  retryAfter?: number;
}

export type AuthSuccessPayload = LoginResult;

export interface PinExpiredPayload {
  pin: string;
}

/** What an acknowledgement callback receives: the event's payload plus `success`. */
export type AckPayload = ({ success: true } & PinRegisteredPayload) | { success: true; pinId: string } | ({ success: false } & PinErrorPayload);

/**
 * Between servers (worker → every web node, through the adapter's request channel). The worker
 * knows a registration by its PIN hash only; the node holding the socket knows the PIN and
 * turns these into the client events, so it can fill in `pin` and forget what it delivered.
 */
export const INTERNAL_EVENTS = {
  /** (pinHash, result) */
  authSuccess: 'internal:auth-success',
  /** (pinHash, pinId) */
  pinExpired: 'internal:pin-expired',
  /** (pinHash, pinId) */
  awaitingConfirmation: 'internal:awaiting-confirmation',
  /** (pinHash, pinId) */
  loginDenied: 'internal:login-denied',
  /** (pinHash, pinId) */
  loginFailed: 'internal:login-failed',
} as const;

/** The room of a registration's sockets, by PIN hash (known to the web and the worker, not the PIN). */
export const registrationRoom = (pinHash: string): string => `reg:${pinHash}`;
