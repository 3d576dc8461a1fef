import { expect } from 'chai';
import { fullLogin } from '../helpers/flow.js';
import { get } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';

describe('smoke: web and worker from the Procfile', function () {
  let stack: Stack;
  before(async function () {
    this.timeout(120000);
    stack = await startStack({ name: 'smoke', webs: 1, workers: 1 });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
  });

  it('answers /health and completes a login end to end', async function () {
    const health = await get(stack.url, '/health');
    expect(health.status).to.equal(200);
    expect(health.body.status).to.equal('ok');
    const { login } = await fullLogin(stack.url);
    expect(login.verified).to.equal(true);
    expect(login.token).to.be.a('string');
  });
});
