import { describe, expect, it } from "vitest";
import { SenderRate } from "../src/domain/senderRate.js";

describe("messages a sending address may hand over a minute", () => {
  it("lets a burst of a minute's share through, then one per share of the minute, each sender apart", () => {
    const rate = new SenderRate(3);
    const t = Date.UTC(2031, 4, 2, 10, 0, 59);
    expect([0, 1, 2, 3].map((i) => rate.take("192.0.2.1", t + i))).toEqual([true, true, true, false]);
    expect(rate.take("192.0.2.2", t + 3)).toBe(true);
    // A new minute on the clock gives nothing back by itself: a third of a minute gives one message.
    expect(rate.take("192.0.2.1", t + 1_000)).toBe(false);
    expect(rate.take("192.0.2.1", t + 20_010)).toBe(true);
    expect(rate.take("192.0.2.1", t + 20_020)).toBe(false);
    // A minute untouched fills the bucket again.
    expect([0, 1, 2, 3].map((i) => rate.take("192.0.2.1", t + 80_020 + i))).toEqual([true, true, true, false]);
  });
});
