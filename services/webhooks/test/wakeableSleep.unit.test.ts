import { describe, expect, it } from "vitest";
import { WakeableSleep } from "../src/outbound/wakeableSleep.js";

const LONG_MS = 60_000;
/** Whether the sleep ended within a short while, rather than running its course. */
const endsSoon = (sleep: Promise<void>) => Promise.race([sleep.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000))]);

describe("a wakeable sleep", () => {
  it("ends at a wake", async () => {
    const rest = new WakeableSleep();
    const sleeping = rest.sleep(LONG_MS);
    rest.wake();
    expect(await endsSoon(sleeping)).toBe(true);
  });

  it("keeps a wake that came while awake for the next sleep, also after a sleep a wake ended", async () => {
    const rest = new WakeableSleep();
    const first = rest.sleep(LONG_MS);
    rest.wake();
    await first;
    // Awake now (as while a claim runs): this wake must not be lost.
    rest.wake();
    expect(await endsSoon(rest.sleep(LONG_MS))).toBe(true);
    // Used up: the next sleep runs its course.
    expect(await endsSoon(rest.sleep(LONG_MS))).toBe(false);
  });

  it("sleeps its time without a wake", async () => {
    const rest = new WakeableSleep();
    const started = Date.now();
    await rest.sleep(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
