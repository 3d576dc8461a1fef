/**
 * A minimal real-time client: registers a PIN over Socket.IO, tells the person what to send in
 * the chat, and waits for `auth-success` (or `pin-expired`). It registers again on every
 * (re)connect, which is how a client re-joins its registration after a node went away.
 *
 *   npm run build && node dist/scripts/socket-client-example.js [http://127.0.0.1:3000]
 */
import { randomBytes } from 'node:crypto';
import { io } from 'socket.io-client';

const url = process.argv[2] ?? 'http://127.0.0.1:3000';

// The PIN is the client's secret (whoever knows it can collect the tokens): long and random.
const pin = randomBytes(18).toString('base64url');
// The server draws the emoji string; it is sent back on re-joins (the holder's proof).
let emojiString: string | undefined;

// websocket only: no sticky sessions needed in front of several nodes
const socket = io(url, { transports: ['websocket'] });

socket.on('connect', () => {
  const ask = emojiString === undefined ? { pin } : { pin, emojiString };
  socket.emit('register-pin', ask, (answer: { success: boolean; expiresIn?: number; emojiString?: string; error?: string; message?: string }) => {
    if (answer.success) {
      emojiString = answer.emojiString;
      console.log(`Send this in WhatsApp within ${answer.expiresIn} s:  PIN: ${emojiString}`);
    } else console.error(`register-pin failed: ${answer.error} ${answer.message}`);
  });
});
socket.on('auth-success', (result: { token: string; refreshToken: string; user: { name: string; phone: string } }) => {
  console.log(`Signed in as ${result.user.name} (${result.user.phone}); access token ${result.token.slice(0, 16)}…`);
  socket.close();
});
socket.on('pin-expired', () => {
  console.log('The PIN expired before the message arrived.');
  socket.close();
});
socket.on('pin-error', (e: { error: string; message: string }) => console.error(`pin-error ${e.error}: ${e.message}`));
socket.on('disconnect', (reason) => {
  if (reason !== 'io client disconnect') console.log(`disconnected (${reason}); reconnecting…`);
});
