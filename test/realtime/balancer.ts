import net from 'node:net';

/**
 * A minimal TCP load balancer on loopback, as a router in front of several web nodes: each new
 * connection goes to the first backend that accepts it. A node that stopped listening is
 * skipped, so clients that reconnect land on another node.
 */
export interface Balancer {
  url: string;
  close(): Promise<void>;
}

export async function startBalancer(ports: number[]): Promise<Balancer> {
  const open = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    open.add(s);
    s.on('close', () => open.delete(s));
  };
  const server = net.createServer((down) => {
    track(down);
    down.on('error', () => down.destroy());
    const attempt = (i: number): void => {
      if (i >= ports.length || down.destroyed) {
        down.destroy();
        return;
      }
      const up = net.connect(ports[i]!, '127.0.0.1');
      track(up);
      let linked = false;
      up.once('connect', () => {
        linked = true;
        up.pipe(down);
        down.pipe(up);
      });
      up.on('error', () => {
        if (linked) down.destroy();
        else attempt(i + 1);
      });
      up.on('close', () => {
        if (linked) down.destroy();
      });
      down.on('close', () => up.destroy());
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
