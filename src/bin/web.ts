import { awaitRedis, bootstrap, onShutdown } from './bootstrap.js';
import { startWeb } from './web-role.js';

const b = bootstrap('web');
await awaitRedis(b);
const web = await startWeb(b);
onShutdown(b, () => web.stop());
