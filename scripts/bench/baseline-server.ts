import http from 'node:http';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';

/**
 * The baseline: a bare Koa + koa-bodyparser server that parses the same webhook body and
 * answers 200, with nothing else. It shows what this hardware and this load generator allow,
 * so the service's ingestion figure can be read as a ratio of it. Run as a child process
 * (PORT from the environment), like the service.
 */
const app = new Koa();
app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb' }));
app.use((ctx) => {
  ctx.body = { received: true, accepted: ctx.request.body === undefined ? 0 : 1, ignored: 0 };
});

const server = http.createServer(app.callback());
server.keepAliveTimeout = 61_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
