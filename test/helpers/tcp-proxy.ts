// A TCP proxy between an app and PostgreSQL that a test can cut and restore: the database "stops" for the app (its
// connections drop, new ones are refused) while the real server keeps serving the other tests.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every connection through the proxy and refuses new ones. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<number>((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  const port = await listen(0);
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server.listening) resolve();
      else server.close(() => resolve());
    });
  return {
    port,
    cut: stop,
    restore: async () => {
      if (!server.listening) await listen(port);
    },
    close: stop,
  };
}
