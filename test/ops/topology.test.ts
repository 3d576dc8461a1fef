import { expect } from 'chai';
import { io as connect, type Socket } from 'socket.io-client';
import { randomEmoji, randomPin } from '../helpers/flow.js';
import { eventually } from '../helpers/http.js';
import { startStack, type ServiceProcess, type Stack } from '../helpers/processes.js';
import { ADMIN, collectLogin, postChat, sample, scrape } from './support.js';

/** docker-compose.yml's topology, as processes: two web nodes and two workers on one Redis. */
describe('ops: the compose topology as processes (2 webs, 2 workers)', function () {
  let stack: Stack;
  let webs: ServiceProcess[] = [];
  let socket: Socket | undefined;
  before(async function () {
    this.timeout(120000);
    stack = await startStack({ name: 'ops-topology', webs: 0, workers: 0, env: { ...ADMIN, METRICS_INTERVAL_MS: '200' } });
    webs = await Promise.all([stack.addWeb({ INSTANCE_NAME: 'web1' }), stack.addWeb({ INSTANCE_NAME: 'web2' })]);
    await Promise.all([stack.addWorker({ INSTANCE_NAME: 'worker1' }), stack.addWorker({ INSTANCE_NAME: 'worker2' })]);
  });
  after(async function () {
    this.timeout(30000);
    socket?.close();
    await stack?.stop();
  });

  it('a socket on one node gets auth-success for a webhook posted to the other; /metrics shows all four nodes', async function () {
    this.timeout(30000);
    const [web1, web2] = webs as [ServiceProcess, ServiceProcess];
    socket = connect(web1.url, { transports: ['websocket'], forceNew: true });
    const pin = randomPin();
    const emoji = randomEmoji();
    const registered = await new Promise<{ pinId?: string }>((resolve) => socket!.emit('register-pin', { pin, emojiString: emoji }, resolve));
    expect(registered.pinId).to.be.a('string');
    const success = new Promise<{ token: string }>((resolve) => socket!.on('auth-success', resolve));
    expect((await postChat(web2.url, `PIN: ${emoji}`)).status).to.equal(200);
    expect((await success).token).to.be.a('string');
    expect((await collectLogin(web2.url, pin)).verified).to.equal(true);

    const text = await eventually(
      async () => {
        const t = await scrape(web2.url);
        const nodes = ['web1', 'web2', 'worker1', 'worker2'].filter((node) => sample(t, 'process_cpu_seconds_total', { node }) >= 0);
        const settled = sample(t, 'pinauth_logins_total') === 1 && sample(t, 'pinauth_socket_connections', { node: 'web1' }) === 1;
        return nodes.length === 4 && settled ? t : undefined;
      },
      10000,
      200,
    );
    expect(sample(text, 'pinauth_webhook_to_login_seconds_count')).to.equal(1);
    expect(sample(text, 'pinauth_http_request_duration_seconds_count', { route: '/messaging-endpoint', node: 'web2' })).to.equal(1);
  });
});
