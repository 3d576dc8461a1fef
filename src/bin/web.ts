import { announce, awaitRedis, bootstrap, onShutdown } from './bootstrap.js';
import { startWeb } from './web-role.js';

const b = bootstrap('web');
await awaitRedis(b);
const web = await startWeb(b);
announce(b, web.port);
onShutdown(b, () => web.stop());
