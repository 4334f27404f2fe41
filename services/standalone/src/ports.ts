import { createServer, type Server } from "node:net";

/** A port held open until `release`, so that nothing else takes it between its choice and its use. */
export interface ReservedPort {
  port: number;
  /**
   * The listening socket holding the port, for the server meant to listen there to take it
   * over (`server.listen(socket)`), so that the port is never free between its choice and its
   * use; the server's close releases it then. Undefined once taken or released.
   */
  takeOver(): Server | undefined;
  release(): Promise<void>;
}

/** Holds a port the system picks (or `port` itself, when given), on `host` (every interface by default), until taken over or released. */
export function reservePort(port = 0, host?: string): Promise<ReservedPort> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const { port: got } = server.address() as { port: number };
      let taken = false;
      let released: Promise<void> | undefined;
      resolve({
        port: got,
        takeOver: () => {
          if (taken || released) return undefined;
          taken = true;
          return server;
        },
        release: () => (released ??= taken ? Promise.resolve() : new Promise<void>((done) => server.close(() => done()))),
      });
    });
  });
}

/** Listens on `port` as the processes do (every interface) and reports the port it got, or undefined when it is taken. */
async function claim(port: number): Promise<number | undefined> {
  try {
    const reserved = await reservePort(port);
    await reserved.release();
    return reserved.port;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") return undefined;
    throw err;
  }
}

/** Whether something listens on the port already. */
export async function portTaken(port: number): Promise<boolean> {
  return (await claim(port)) === undefined;
}

/** `count` distinct ports nothing listens on right now (the system picks them). */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add((await claim(0))!);
  return [...ports];
}

/** Of these ports, each named by what it is for, those something listens on already. */
export async function takenPorts(wanted: { name: string; port: number }[]): Promise<{ name: string; port: number }[]> {
  const taken = await Promise.all(wanted.map((w) => portTaken(w.port)));
  return wanted.filter((_, i) => taken[i]);
}
