import { awaitRedis, bootstrap, onShutdown } from './bootstrap.js';
import { startWeb } from './roles.js';

const b = bootstrap('web');
await awaitRedis(b);
const web = await startWeb(b);
onShutdown(b, () => web.stop());
