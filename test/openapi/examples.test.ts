import { Ajv } from 'ajv';
import { expect } from 'chai';
import { fullLogin } from '../helpers/flow.js';
import { request, type JsonResponse } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { ADMIN, ADMIN_AUTH } from '../ops/support.js';
import { expectDocumented, pointer } from './conformance.js';

interface Media {
  schema?: object;
  example?: unknown;
}
interface Operation {
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: 'path' | 'query'; example?: string }[];
  requestBody?: { content: { 'application/json': Media } };
  responses: Record<string, { content?: Record<string, Media> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>> };

/**
 * The document's examples are what Swagger UI's "Try it out" fills in: each is valid for its
 * schema, and each request, sent as it is (with a signed-in user's token where the operation
 * asks for one, as after "Authorize"), gets an answer the document gives for that operation.
 */
describe('openapi: every operation has examples, and "Try it out" with them answers as documented', function () {
  this.timeout(90000);
  let stack: InProcessStack;
  let doc: Doc;
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  const validator = (ref: string) => ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });

  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'openapi-examples',
      webs: 1,
      workers: 1,
      env: { ...ADMIN, WEBHOOK_VERIFY_TOKEN: 'openapi-examples-verify' },
    });
    doc = (await request(stack.url, 'GET', '/openapi.json')).body as unknown as Doc;
    ajv.addSchema(doc, 'doc');
  });
  after(async () => stack?.stop());

  const operations = (): [string, string, Operation][] =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [path, method, op] as [string, string, Operation]));

  it('each body, path and query parameter has an example, and each JSON answer of 200 too; each is valid for its schema', function () {
    for (const [path, method, op] of operations()) {
      const what = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) expect(p.example, `${what}: parameter ${p.name}`).to.be.a('string');
      const body = op.requestBody?.content['application/json'];
      if (body) {
        expect(body.example, `${what}: body example`).to.not.equal(undefined);
        const v = validator(`doc#/paths/${pointer(path)}/${method}/requestBody/content/application~1json/schema`);
        expect(v(body.example), `${what} body: ${ajv.errorsText(v.errors)}`).to.equal(true);
      }
      const ok = op.responses['200']?.content?.['application/json'];
      // the document itself (/openapi.json) is its own example
      if (ok?.schema && path !== '/openapi.json') {
        expect(ok.example, `${what}: 200 example`).to.not.equal(undefined);
        const v = validator(`doc#/paths/${pointer(path)}/${method}/responses/200/content/application~1json/schema`);
        expect(v(ok.example), `${what} 200 example: ${ajv.errorsText(v.errors)}`).to.equal(true);
      }
    }
  });

  it('each operation, sent with its examples, answers with a status and body the document gives (never a VALIDATION_ERROR)', async function () {
    const { login } = await fullLogin(stack.url, { pushName: 'Ana Silva' });
    const auth: Record<string, string> = {
      bearer: `Bearer ${login.token}`,
      bearerExpiredOk: `Bearer ${login.token}`,
      admin: ADMIN_AUTH,
      metrics: `Bearer ${ADMIN.METRICS_TOKEN}`,
    };
    // signing out everywhere and erasing the account end the token: last
    const everywhere = ([p, m]: [string, string, Operation]): boolean => m === 'delete' && (p === '/sessions' || p === '/account');
    const ordered = [...operations().filter((o) => !everywhere(o)), ...operations().filter(everywhere)];
    const answers: string[] = [];
    for (const [path, method, op] of ordered) {
      let url = path;
      const query = new URLSearchParams();
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(p.example!));
        else query.set(p.name, p.example!);
      }
      if (query.size > 0) url += `?${query}`;
      const scheme = Object.keys(op.security?.[0] ?? {})[0];
      const headers: Record<string, string> = scheme && auth[scheme] ? { authorization: auth[scheme] } : {};
      const body = op.requestBody?.content['application/json'].example;
      const res: JsonResponse<unknown> = await request(stack.url, method.toUpperCase(), url, { headers, ...(body !== undefined ? { json: body } : {}) });
      const what = `${method.toUpperCase()} ${url} → ${res.status}`;
      answers.push(what);
      expect((res.body as { error?: string }).error, `${what}: ${res.text.slice(0, 300)}`).to.not.equal('VALIDATION_ERROR');
      expectDocumented(ajv, doc, method, path, res, what);
    }
    // the ones a person tries first answer 200 with their defaults
    for (const first of [
      'POST /register-pin → 200',
      'POST /check-login → 200',
      'POST /messaging-endpoint → 200',
      'GET /health → 200',
      'GET /profile → 200',
      'POST /send-message → 200',
    ]) {
      expect(answers, answers.join('\n')).to.include(first);
    }
  });
});
