import { describe, expect, it } from "vitest";
import { gcSummary, gcText } from "../gcTrace.js";

// Lines as node 20's --trace-gc-nvp prints them (fields between cut short).
const SCAVENGE = "[123:0x3d8880b0]    17108 ms: pause=4.0 mutator=4100.8 gc=s reduce_memory=0 scavenge=3.9 total_size_before=49615232 allocated=15656128 promoted=567896 new_space_survived=656288";
const SCAVENGE_2 = "[123:0x3d8880b0]    18655 ms: pause=1.5 mutator=1488.3 gc=s reduce_memory=0 allocated=13001272 promoted=600040 new_space_survived=450600";
const MARK_COMPACT = "[123:0x3d8880b0]    30715 ms: pause=9.2 mutator=251.8 gc=mc reduce_memory=0 allocated=268360 promoted=259400 new_space_survived=0";

describe("gcSummary", () => {
  it("When scavenges and a mark-compact are traced, then each is counted with its pause, and only the scavenges' promotions are summed", () => {
    const summary = gcSummary([SCAVENGE, MARK_COMPACT, SCAVENGE_2].join("\n"));
    expect(summary).toEqual({
      scavenges: 2,
      markCompacts: 1,
      pauseMs: 4.0 + 9.2 + 1.5,
      maxPauseMs: 9.2,
      promotedBytes: 567896 + 600040,
      allocatedBytes: 15656128 + 268360 + 13001272,
    });
  });

  it("When the output holds other lines (logs, a trace's other formats), then they are skipped", () => {
    const text = ['{"level":50,"msg":"pause=3 gc=nothing"}', "[123:0x1]   455 ms: Scavenge 4.8 (6.0) -> 4.4 (8.2) MB, 1.10 / 0.00 ms  task;", SCAVENGE, ""].join("\n");
    expect(gcSummary(text)).toMatchObject({ scavenges: 1, markCompacts: 0, maxPauseMs: 4.0 });
  });

  it("When nothing was collected, then every figure is zero and the line says so", () => {
    expect(gcText(gcSummary(""))).toBe("scavenges 0, mark-compacts 0 (pauses 0.0 ms, max 0.0), promoted 0.0 MB, allocated 0.0 MB");
  });
});
