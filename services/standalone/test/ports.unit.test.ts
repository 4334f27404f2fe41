import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { portTaken, reservePort } from "../src/ports.js";

/** Listens on `port` as the processes do (every interface): the error's code when it cannot. */
function listenOn(port: number): Promise<string> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
    server.listen(port, () => server.close(() => resolve("listened")));
  });
}

describe("a reserved port", () => {
  it("is nobody else's from its choice until it is released, then free to listen on", async () => {
    const reserved = await reservePort();
    expect(reserved.port).toBeGreaterThan(0);
    expect(await listenOn(reserved.port)).toBe("EADDRINUSE");
    expect(await portTaken(reserved.port)).toBe(true);
    await reserved.release();
    await reserved.release();
    expect(await listenOn(reserved.port)).toBe("listened");
    expect(await portTaken(reserved.port)).toBe(false);
  });

  it("taken over, is the new server's at once and never free between, and its close gives it back", async () => {
    const reserved = await reservePort();
    const held = reserved.takeOver()!;
    expect(reserved.takeOver()).toBeUndefined();
    const server = createHttpServer((_req, res) => res.end("pages"));
    await new Promise<void>((resolve) => server.listen(held, resolve));
    expect(await (await fetch(`http://127.0.0.1:${reserved.port}/`)).text()).toBe("pages");
    expect(await listenOn(reserved.port)).toBe("EADDRINUSE");
    // Released, it is still the server's: only the server's close gives it back.
    await reserved.release();
    expect(await listenOn(reserved.port)).toBe("EADDRINUSE");
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await listenOn(reserved.port)).toBe("listened");
  });

  it("released, cannot be taken over", async () => {
    const reserved = await reservePort();
    await reserved.release();
    expect(reserved.takeOver()).toBeUndefined();
  });
});
