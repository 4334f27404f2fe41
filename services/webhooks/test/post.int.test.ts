import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "../src/delivery/post.js";

describe("posting to a receiver", () => {
  const hits: string[] = [];
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? "");
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "/target" }).end();
      } else if (req.url === "/endless") {
        res.writeHead(200);
        const chunk = Buffer.alloc(16 * 1024, 120);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once("drain", pump);
        };
        pump();
      } else if (req.url === "/silent") {
        // never answers
      } else {
        res.writeHead(204).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string, host = "127.0.0.1", allowPrivate = true, timeoutMs = 5_000) =>
    postJson(new URL(`http://${host}:${port}${path}`), "{}", { "webhook-id": "evt_x" }, { timeoutMs, allowPrivate });

  it("delivers on a 2xx", async () => {
    expect(await post("/ok")).toMatchObject({ status: 204, error: null });
  });

  it("refuses, at delivery, a name that resolves to loopback and a loopback literal, sending nothing", async () => {
    const before = hits.length;
    const byName = await post("/ok", "localhost", false);
    expect(byName.status).toBeNull();
    expect(byName.error).toMatch(/localhost resolves to a private, loopback or link-local address/);
    expect((await post("/ok", "127.0.0.1", false)).error).toMatch(/private, loopback or link-local/);
    expect(hits.length).toBe(before);
  });

  it("does not follow a redirect", async () => {
    const result = await post("/redirect");
    expect(result).toMatchObject({ status: 302, error: "the endpoint answered 302" });
    expect(hits).not.toContain("/target");
  });

  it("stops reading an answer after 64 KiB", async () => {
    const result = await post("/endless", "127.0.0.1", true, 20_000);
    expect(result.status).toBe(200);
    expect(result.durationMs).toBeLessThan(15_000);
  });

  it("gives up on a receiver that does not answer in time", async () => {
    const result = await post("/silent", "127.0.0.1", true, 300);
    expect(result).toMatchObject({ status: null, error: "no answer within 300 ms" });
  });
});
