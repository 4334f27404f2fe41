import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nameRoute, serveMetrics, startTelemetry, withHttpMetrics } from "../src/index.js";

describe("withHttpMetrics", () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    await startTelemetry({ serviceName: "http-metrics-test" });
    const routeOf = (method: string, path: string) => (method === "GET" && /^\/v1\/things\/[^/]+$/.test(path) ? "/v1/things/:id" : undefined);
    const app = withHttpMetrics((req, res) => {
      const path = (req.url ?? "").split("?")[0]!;
      const route = routeOf(req.method ?? "GET", path);
      if (route) nameRoute(res, route);
      res.statusCode = route ? (path.endsWith("limited") ? 429 : 200) : 404;
      res.end("{}");
    });
    server = createServer((req, res) => (req.url === "/metrics" ? serveMetrics(req, res) : app(req, res)));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("counts and times requests by the route template the handler names, never by the ids in the path", async () => {
    for (const path of ["/v1/things/thg_1", "/v1/things/thg_2?q=secret", "/v1/things/limited", "/nowhere/at/all", "/v1/things/thg_3/extra"]) await fetch(`${base}${path}`);
    const text = await (await fetch(`${base}/metrics`)).text();
    const count = (labels: string) => Number(new RegExp(`^sched_http_server_duration_count\\{${labels},otel_scope_name[^}]*\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    expect(count('route="/v1/things/:id",method="GET",status="200"')).toBe(2);
    expect(count('route="/v1/things/:id",method="GET",status="429"')).toBe(1);
    expect(count('route="unmatched",method="GET",status="404"')).toBe(2);
    expect(text).toMatch(/^sched_gateway_rate_limited(_total)?\{route="\/v1\/things\/:id"[^}]*\} 1$/m);
    expect(text).not.toMatch(/thg_1|secret/);
  });
});
