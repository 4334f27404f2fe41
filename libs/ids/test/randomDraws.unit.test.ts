import type * as NodeCrypto from "node:crypto";
import { describe, expect, it, vi } from "vitest";

// Each draw from the CSPRNG is counted; what is drawn stays the real thing.
const draws = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:crypto", async (importOriginal) => {
  const crypto = await importOriginal<typeof NodeCrypto>();
  return {
    ...crypto,
    randomFillSync: ((buffer: Buffer) => {
      draws.count += 1;
      return crypto.randomFillSync(buffer);
    }) as typeof NodeCrypto.randomFillSync,
  };
});

const { newId } = await import("../src/ids.js");

describe("newId's randomness", () => {
  it("is drawn a few thousand bytes at a time: a draw costs about as much for 4096 bytes as for 512, nearly all of it the call", () => {
    newId("mtg");
    draws.count = 0;
    // 100 ids take some 2,500 bytes: at most one draw, where 512 bytes a draw took four or five.
    for (let i = 0; i < 100; i++) newId("mtg");
    expect(draws.count).toBeLessThanOrEqual(1);
  });
});
