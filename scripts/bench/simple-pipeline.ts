import { createHmac, generateKeyPairSync, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import Router from '@koa/router';
import { createAdapter } from '@socket.io/redis-adapter';
import { Emitter } from '@socket.io/redis-emitter';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { Server } from 'socket.io';

/**
 * The simplest pipeline a login could take on the service's own libraries, the second baseline
 * of the benchmark (docs/benchmark.md): a Koa webhook route adds one BullMQ job; one BullMQ
 * worker claims the registration in one Lua script, signs one ES256 token (jsonwebtoken) and
 * emits `auth-success` through the Socket.IO Redis emitter to the socket, on whichever web node
 * (the Redis adapter) it registered. It speaks the service's wire for what the benchmark sends
 * (a signed Evolution webhook, `register-pin` over the socket) and nothing more: no validation,
 * limits, confirmation, retries or metrics. `ROLE=web` (PORT) or `ROLE=worker`; REDIS_URL,
 * KEY_PREFIX and WEBHOOK_SECRET as the service's.
 */
const prefix = `${process.env.KEY_PREFIX ?? 'simple'}:simple`;
const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
const channel = `${prefix}:socket.io`;
const registration = (emojiString: string): string => `${prefix}:reg:${emojiString}`;

function startWeb(): void {
  const redis = new Redis(connection.url);
  const queue = new Queue('login', { connection, prefix });
  const secret = process.env.WEBHOOK_SECRET ?? '';

  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { ok: true };
  });
  router.post('/messaging-endpoint', bodyParser({ enableTypes: ['json'] }), async (ctx) => {
    const mac = Buffer.from(`sha256=${createHmac('sha256', secret).update(String(ctx.request.rawBody)).digest('hex')}`);
    const given = Buffer.from(ctx.get('x-hub-signature-256'));
    if (given.length !== mac.length || !timingSafeEqual(given, mac)) ctx.throw(401);
    const { data } = ctx.request.body as { data: { key: { id: string; remoteJid: string }; message: { conversation: string } } };
    const phone = `+${data.key.remoteJid.split('@')[0]}`;
    // the message id as the job id: a gateway's retry of the same message adds nothing
    await queue.add('login', { phone, text: data.message.conversation }, { jobId: data.key.id, removeOnComplete: 5000, removeOnFail: 5000 });
    ctx.body = { received: true };
  });
  const app = new Koa();
  app.use(router.routes());

  const server = http.createServer(app.callback());
  const io = new Server(server, { serveClient: false, adapter: createAdapter(redis, redis.duplicate(), { key: channel }) });
  io.on('connection', (socket) => {
    socket.on('register-pin', async ({ emojiString }: { emojiString: string }, ack: (answer: unknown) => void) => {
      const pinId = randomUUID();
      await redis.multi().hset(registration(emojiString), 'pinId', pinId, 'state', 'pending').expire(registration(emojiString), 900).exec();
      await socket.join(`pin:${pinId}`);
      ack({ success: true, pinId });
    });
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.on('SIGTERM', () => {
    void io.close();
    void queue.close().then(() => redis.quit());
    setTimeout(() => process.exit(0), 200).unref();
  });
}

// The atomic claim: the registration goes from pending to verified once, whoever else tries.
const CLAIM = `
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return false end
redis.call('HSET', KEYS[1], 'state', 'verified', 'phone', ARGV[1])
return redis.call('HGET', KEYS[1], 'pinId')`;

/** ioredis's client with the command defineCommand adds (EVALSHA, EVAL the first time). */
interface ClaimingRedis extends Redis {
  claim(registrationKey: string, phone: string): Promise<string | null>;
}

function startWorker(): void {
  const redis = new Redis(connection.url) as ClaimingRedis;
  redis.defineCommand('claim', { numberOfKeys: 1, lua: CLAIM });
  const emitter = new Emitter(redis, { key: channel });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  const worker = new Worker(
    'login',
    async (job: { data: { phone: string; text: string } }) => {
      const emojiString = /PIN:\s*(\S+)/.exec(job.data.text)?.[1];
      if (!emojiString) return 'no_code';
      const pinId = await redis.claim(registration(emojiString), job.data.phone);
      if (pinId === null) return 'no_match';
      const token = jwt.sign({ sub: job.data.phone }, privateKey, { algorithm: 'ES256', expiresIn: '15m' });
      emitter.to(`pin:${pinId}`).emit('auth-success', { token, user: { phone: job.data.phone } });
      return 'logged-in';
    },
    // the service's inbound concurrency (INBOUND_CONCURRENCY's default)
    { connection, prefix, concurrency: 256 },
  );
  process.on('SIGTERM', () => {
    void worker
      .close()
      .then(() => redis.quit())
      .finally(() => process.exit(0));
  });
}

// started last, once every constant above is defined
if (process.env.ROLE === 'worker') startWorker();
else startWeb();
