import { createServer, connect, type Socket } from "node:net";

/** A TCP proxy a test can cut (every connection dropped, new ones refused) and restore, to take a server away from a process. */
export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Drops every connection and stops listening: connecting is refused, as when the server is down. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen(0);
  const { port } = server.address() as { port: number };
  return {
    port,
    via: (url) => {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut: () => (server.listening ? stop() : Promise.resolve()),
    restore: () => listen(port),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
