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
});
