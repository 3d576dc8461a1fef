import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { loginPageRoutes } from '../../src/demo/routes.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { DASHBOARD_PATH } from '../../src/http/admin/dashboard.js';
import { METRICS_PATH } from '../../src/http/admin/metrics-route.js';
import { createRouter } from '../../src/http/routes.js';
import { createWebhookAcceptor } from '../../src/http/webhook-core.js';
import { parseWebhookPath, WEBHOOK_PATH } from '../../src/messaging/webhook-path.js';
import { createLogger } from '../../src/observability/logger.js';
import { buildOpenApi, openApiPath } from '../../src/openapi/document.js';
import { CLIENT_EVENTS, SERVER_EVENTS } from '../../src/realtime/events.js';
import { createServices } from '../../src/services.js';
import { uniquePrefix } from '../helpers/redis.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } } & Record<
  string,
  unknown
>;

/** `METHOD /path` of every route the router answers (HEAD comes with GET), OpenAPI style. */
async function routerRoutes(): Promise<string[]> {
  const config = loadConfig({ KEY_PREFIX: uniquePrefix('openapi-routes'), DEMO_PAGE: 'true' });
  const services = createServices(config, createLogger({ level: 'error', production: false, role: 'test', instance: 'test' }), 'web');
  try {
    const router = createRouter(services, createWebhookAcceptor(services), loginPageRoutes(config));
    return router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${openApiPath(String(layer.path))}`));
  } finally {
    await services.close();
  }
}

const documented = (doc: Doc): string[] => Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

describe('openapi: the document describes exactly the routes the service answers', function () {
  const doc = buildOpenApi({ version: 'test' }) as Doc;

  it('every router route is in the document, and every documented path is served', async function () {
    // beside the router: the operator pages (middleware in front of it)
    const served = [...(await routerRoutes()), `GET ${METRICS_PATH}`, `GET ${DASHBOARD_PATH}`];
    const paths = documented(doc);
    expect(
      served.filter((r) => !paths.includes(r)),
      'routes the document does not describe (add them to src/openapi/paths.ts)',
    ).to.deep.equal([]);
    expect(
      paths.filter((p) => !served.includes(p)),
      'documented routes nothing serves',
    ).to.deep.equal([]);
  });

  it("the webhook's paths are documented", function () {
    // the webhook route takes POSTs that parseWebhookPath accepts: these forms
    const forms: [string, string][] = [
      [WEBHOOK_PATH, WEBHOOK_PATH],
      [`${WEBHOOK_PATH}/messages-upsert`, `${WEBHOOK_PATH}/{first}`],
      [`${WEBHOOK_PATH}/a-path-secret-0123456789`, `${WEBHOOK_PATH}/{first}`],
      [`${WEBHOOK_PATH}/a-path-secret-0123456789/messages-upsert`, `${WEBHOOK_PATH}/{first}/{second}`],
    ];
    for (const [url, path] of forms) {
      expect(parseWebhookPath(url), url).to.not.equal(null);
      expect(doc.paths[path]?.post, path).to.exist;
    }
    expect(parseWebhookPath(`${WEBHOOK_PATH}/a/b/c`)).to.equal(null);
  });

  it('is OpenAPI 3.1 whose every $ref resolves, with every error code and every socket event', function () {
    expect(doc.openapi).to.equal('3.1.0');
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).to.be.greaterThan(10);
    for (const name of refs) expect(doc.components.schemas, name).to.have.property(name);
    expect(Object.keys(doc['x-error-codes'] as object)).to.have.members(Object.keys(ERROR_STATUS));
    const errorEnum = (doc.components.schemas.ErrorBody as { properties: { error: { enum: string[] } } }).properties.error.enum;
    expect(errorEnum).to.have.members(Object.keys(ERROR_STATUS));
    const sockets = doc['x-socket-events'] as { clientToServer: object; serverToClient: object };
    expect(Object.keys(sockets.clientToServer)).to.include.members(Object.values(CLIENT_EVENTS));
    expect(Object.keys(sockets.serverToClient)).to.include.members(Object.values(SERVER_EVENTS));
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.responses, `${method} ${path}`).to.have.property('200');
        expect(op.responses, `${method} ${path}`).to.have.property('500');
      }
    }
  });
});
