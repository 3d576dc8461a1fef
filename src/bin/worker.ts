import { announce, awaitRedis, bootstrap, onShutdown } from './bootstrap.js';
import { startWorker } from './worker-role.js';

const b = bootstrap('worker');
await awaitRedis(b);
const worker = startWorker(b);
announce(b);
onShutdown(b, () => worker.stop());
