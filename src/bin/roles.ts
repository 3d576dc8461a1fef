/** The roles an entry point can run; each in its own module, so a worker never loads the web stack. */
export { startWeb, type WebRole } from './web-role.js';
export { startWorker, type WorkerRole } from './worker-role.js';
