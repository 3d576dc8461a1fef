import * as req from '../validation/schemas.js';
import * as res from '../validation/responses.js';

/**
 * The Socket.IO events, described beside the HTTP paths (the document's `x-socket-events`):
 * same port, default path `/socket.io`. test/openapi/document.test.ts checks every event name of
 * realtime/events.ts is here.
 */
export interface SocketEventDoc {
  summary: string;
  payload: object;
  /** client → service events take an optional acknowledgement callback */
  ack?: object;
}

export const SOCKET_EVENTS: { clientToServer: Record<string, SocketEventDoc>; serverToClient: Record<string, SocketEventDoc> } = {
  clientToServer: {
    'register-pin': {
      summary: 'Register (or re-join after a reconnect: same PIN and emoji string) a login; this socket then gets its events.',
      payload: req.registerPinSchema,
      ack: res.ackSchema,
    },
    'cancel-auth': { summary: 'Cancel a pending registration.', payload: req.cancelAuthSchema, ack: res.ackSchema },
  },
  serverToClient: {
    'pin-registered': { summary: 'Answer to register-pin.', payload: res.pinRegisteredEventSchema },
    'awaiting-confirmation': {
      summary: 'The chat message arrived; the person is asked in the chat to confirm the login.',
      payload: res.pinIdEventSchema,
    },
    'auth-success': { summary: 'Signed in: the tokens and the user, only to the sockets that registered the PIN.', payload: res.loginResultSchema },
    'pin-expired': { summary: "The registration's lifetime ended.", payload: res.pinExpiredEventSchema },
    'pin-error': {
      summary: 'A failure, with a code of the error table (LOGIN_DENIED: the person answered no; LOGIN_FAILED: start again).',
      payload: res.pinErrorEventSchema,
    },
  },
};
