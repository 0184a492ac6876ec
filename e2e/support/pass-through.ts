import net from 'node:net';

/**
 * A stand-in for a Service in front of controller replicas: each connection goes to the next
 * target that accepts it (a refused connection tries the next one), as kube-proxy spreads
 * connections over the ready endpoints.
 */
export async function startPassThrough(targets: number[]): Promise<{ port: number; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const tryTarget = (left: number) => {
      if (left === 0) return client.destroy();
      const port = targets[next++ % targets.length];
      const upstream = net.connect(port, '127.0.0.1');
      upstream.once('error', () => {
        upstream.destroy();
        if (!client.destroyed && !upstream.remoteAddress) tryTarget(left - 1);
        else client.destroy();
      });
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryTarget(targets.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
