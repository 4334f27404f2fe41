import { describe, expect, it } from "vitest";
import { startGivenUp } from "../src/processes.js";

describe("waiting for a starting process", () => {
  it("waits 90 s whatever the process does", () => {
    expect(startGivenUp(89_000, 89_000)).toBe(false);
    expect(startGivenUp(60_000, 0)).toBe(false);
  });

  it("after 90 s, waits on while the process has used CPU in the last 15 s", () => {
    expect(startGivenUp(120_000, 2_000)).toBe(false);
    expect(startGivenUp(120_000, 16_000)).toBe(true);
    expect(startGivenUp(91_000, 30_000)).toBe(true);
  });

  it("gives up after ten minutes, working or not", () => {
    expect(startGivenUp(599_000, 0)).toBe(false);
    expect(startGivenUp(601_000, 0)).toBe(true);
  });
});
