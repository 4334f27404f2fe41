import { describe, expect, it } from "vitest";
import { analyzeDue } from "../src/analyzeDue.js";

const table = (liveRows: number, changedSinceAnalyze: number) => ({ schema: "meetings", table: "meetings", liveRows, changedSinceAnalyze });

describe("analyzeDue", () => {
  it("When a new table has had no more than 50 rows written and a tenth, then its statistics are not gathered yet", () => {
    expect(analyzeDue(table(0, 0))).toBe(false);
    expect(analyzeDue(table(55, 55))).toBe(false);
  });

  it("When a new table has had more rows written than 50 and a tenth, then its statistics are gathered", () => {
    expect(analyzeDue(table(56, 56))).toBe(true);
  });

  it("When a table changed by more than 50 rows plus a tenth of its rows since it was analyzed, then it is analyzed again", () => {
    expect(analyzeDue(table(10_000, 1_050))).toBe(false);
    expect(analyzeDue(table(10_000, 1_051))).toBe(true);
  });

  it("When rows were deleted as fast as they were written, then the changes count, not the size", () => {
    expect(analyzeDue(table(10, 200))).toBe(true);
  });
});
