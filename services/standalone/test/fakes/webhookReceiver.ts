import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How a path answers: statuses in turn (then 200), 200 after a pause, or never. */
export type Script = number[] | { delayMs: number } | "hang";

/**
 * A webhook receiver on loopback, as a customer would run one: it records
 * every request and answers each path by its script. A hanging path holds
 * the request open until the receiver closes.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Script>();
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
        const script = this.scripts.get(path);
        if (script === "hang") {
          this.hanging.add(res);
          return;
        }
        if (script && "delayMs" in script) {
          setTimeout(() => res.end("ok"), script.delayMs);
          return;
        }
        res.statusCode = script?.shift() ?? 200;
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", () => resolve()));
    return this;
  }

  /** The URL of a path on this receiver, answering by `script`. */
  url(path: string, script: Script = []): string {
    this.scripts.set(path, script);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
