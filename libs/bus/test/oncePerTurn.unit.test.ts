import { describe, expect, it } from "vitest";
import { OncePerTurn } from "../src/oncePerTurn.js";

describe("OncePerTurn", () => {
  it("runs the work queued in one turn of the event loop together, after the turn's callbacks, and the next turn's apart", async () => {
    const errors: unknown[] = [];
    const turns = new OncePerTurn((err) => errors.push(err));
    const ran: string[] = [];
    const first = turns.run(() => ran.push("a"));
    // Another callback of the same turn (as a second database answer would be) joins the same run.
    const { second } = await new Promise<{ second: Promise<void> }>((resolve) => process.nextTick(() => resolve({ second: turns.run(() => ran.push("b")) })));
    expect(ran).toEqual([]);
    expect(second).toBe(first);
    await first;
    expect(ran).toEqual(["a", "b"]);
    const third = turns.run(() => ran.push("c"));
    expect(third).not.toBe(first);
    await third;
    expect(ran).toEqual(["a", "b", "c"]);
    expect(errors).toEqual([]);
  });

  it("hands a failing piece of work to onError and still runs the rest", async () => {
    const errors: unknown[] = [];
    const turns = new OncePerTurn((err) => errors.push(err));
    const ran: string[] = [];
    const failed = turns.run(() => {
      throw new Error("connection closed");
    });
    const after = turns.run(() => ran.push("after"));
    await Promise.all([failed, after]);
    expect(ran).toEqual(["after"]);
    expect(errors.map((e) => (e as Error).message)).toEqual(["connection closed"]);
  });
});
