import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request that went through, as the tests count them. */
export interface ProxiedRequest {
  method: string;
  path: string;
  /** The Basic-auth user it was made as. */
  user: string | undefined;
}

/**
 * A loopback HTTP proxy in front of a real server (Radicale): forwards every
 * request as it came and records who asked what, so a test can count the
 * requests one account's connection makes.
 */
export class CountingProxy {
  readonly requests: ProxiedRequest[] = [];
  private server!: Server;

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      this.requests.push({ method: req.method ?? "GET", path: req.url ?? "/", user: basic ? Buffer.from(basic, "base64").toString("utf8").split(":")[0] : undefined });
      const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
