import { announce, awaitRedis, bootstrap, onShutdown } from './bootstrap.js';
import { startWeb, startWorker } from './roles.js';

/** Every role in one process (`npm start`): for a laptop or a demo. */
const b = bootstrap('all');
await awaitRedis(b);
const web = await startWeb(b);
const worker = startWorker(b);
announce(b, web.port);
// side by side, so both fit in one shutdown limit
onShutdown(b, async () => {
  await Promise.all([web.stop(), worker.stop()]);
});
