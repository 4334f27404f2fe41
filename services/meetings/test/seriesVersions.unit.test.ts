import { describe, expect, it } from "vitest";
import { readSeriesVersions } from "../src/db/queries.js";

describe("readSeriesVersions", () => {
  it("reads `id:version,…` back in order, each series once", () => {
    expect(readSeriesVersions(null)).toEqual([]);
    expect(readSeriesVersions("ser_a:3,ser_b:1,ser_a:3,ser_c:12,ser_b:1")).toEqual([
      { id: "ser_a", version: 3 },
      { id: "ser_b", version: 1 },
      { id: "ser_c", version: 12 },
    ]);
  });
});
