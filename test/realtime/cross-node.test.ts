import { loginEvents } from './shared/login-events.js';
import { manyClients } from './shared/many-clients.js';
import { shutdown } from './shared/shutdown.js';
import { useStack } from './stack.js';

/** One stack (three web nodes and a worker) shared by the cross-node suites: fewer process starts. */
describe('realtime: three web nodes and a worker', function () {
  const stack = useStack({ name: 'rt-nodes', webs: 3 });
  loginEvents(stack);
  manyClients(stack);
  shutdown(stack); // last: it adds a node and stops it
});
