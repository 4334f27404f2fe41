import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "../src/outbound/post.js";

describe("posting to a receiver", () => {
  const hits: string[] = [];
  /** Each request's connection, by number of the connection. */
  const connectionOf: number[] = [];
  let server: Server;
  let port: number;
  beforeAll(async () => {
    let connections = 0;
    const numbers = new WeakMap<object, number>();
    const served = new WeakSet<object>();
    server = createServer((req, res) => {
      hits.push(req.url ?? "");
      if (!numbers.has(req.socket)) numbers.set(req.socket, ++connections);
      connectionOf.push(numbers.get(req.socket)!);
      const again = served.has(req.socket);
      served.add(req.socket);
      if (req.url === "/one-per-connection" && again) {
        // As a receiver whose idle timeout struck just as the connection was reused.
        req.socket.destroy();
      } else if (req.url === "/redirect") {
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
    postJson(new URL(`http://${host}:${port}${path}`), Buffer.from("{}"), { "webhook-id": "evt_x" }, { timeoutMs, allowPrivate });

  it("delivers on a 2xx", async () => {
    expect(await post("/ok")).toMatchObject({ status: 204, error: null });
  });

  it("keeps the connection alive for the next delivery to the same origin", async () => {
    expect(await post("/ok")).toMatchObject({ status: 204, error: null });
    expect(await post("/ok")).toMatchObject({ status: 204, error: null });
    const [first, second] = connectionOf.slice(-2);
    expect(second).toBe(first);
  });

  it("sends again on a new connection when a kept-alive one was closed under it, within the same time", async () => {
    expect(await post("/one-per-connection")).toMatchObject({ status: 204, error: null });
    const before = hits.length;
    expect(await post("/one-per-connection")).toMatchObject({ status: 204, error: null });
    expect(hits.slice(before)).toEqual(["/one-per-connection", "/one-per-connection"]);
    const [closed, fresh] = connectionOf.slice(-2);
    expect(fresh).not.toBe(closed);
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
