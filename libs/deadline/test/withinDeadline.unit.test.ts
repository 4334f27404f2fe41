import { describe, expect, it } from "vitest";
import { withinDeadline } from "../src/index.js";

const never = new Promise<never>(() => undefined);

describe("withinDeadline", () => {
  it("answers with the work when it settles first", async () => {
    await expect(withinDeadline(Promise.resolve("done"), 60_000, () => "late")).resolves.toBe("done");
  });

  it("passes on the work's failure when it fails first", async () => {
    await expect(withinDeadline(Promise.reject(new Error("broken")), 60_000, () => "late")).rejects.toThrow("broken");
  });

  it("answers with what late() returns once the time has passed", async () => {
    await expect(withinDeadline(never, 5, () => "late")).resolves.toBe("late");
  });

  it("fails with what late() throws once the time has passed", async () => {
    await expect(
      withinDeadline(never, 5, () => {
        throw new Error("too slow");
      }),
    ).rejects.toThrow("too slow");
  });

  it("treats a deadline already past as due at once", async () => {
    await expect(withinDeadline(never, -1_000, () => "late")).resolves.toBe("late");
  });

  it("never calls late() when the work settled first", async () => {
    let called = false;
    await withinDeadline(Promise.resolve(1), 1, () => (called = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(called).toBe(false);
  });
});
