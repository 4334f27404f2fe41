import { describe, expect, it } from "vitest";
import { clipToSpan, coveringHours } from "../src/domain/busySpan.js";

const at = (iso: string) => Date.parse(iso) / 1_000;

describe("the span asked of the provider", () => {
  it("widens a request to whole hours, so requests a moment apart ask the same", () => {
    expect(coveringHours("2026-03-02T09:14:07Z", "2026-03-09T09:14:07Z")).toEqual({ from: "2026-03-02T09:00:00Z", to: "2026-03-09T10:00:00Z" });
    expect(coveringHours("2026-03-02T09:14:59Z", "2026-03-09T09:14:59Z")).toEqual(coveringHours("2026-03-02T09:14:07Z", "2026-03-09T09:14:07Z"));
    expect(coveringHours("2026-03-02T09:00:00Z", "2026-03-02T10:00:00Z")).toEqual({ from: "2026-03-02T09:00:00Z", to: "2026-03-02T10:00:00Z" });
  });

  it("answers only the part of each busy interval inside the request", () => {
    const busy: [number, number][] = [
      [at("2026-03-02T09:00:00Z"), at("2026-03-02T09:30:00Z")],
      [at("2026-03-02T10:00:00Z"), at("2026-03-02T11:00:00Z")],
      [at("2026-03-02T12:00:00Z"), at("2026-03-02T13:00:00Z")],
    ];
    expect(clipToSpan(busy, "2026-03-02T09:14:07Z", "2026-03-02T10:30:00Z")).toEqual([
      [at("2026-03-02T09:14:07Z"), at("2026-03-02T09:30:00Z")],
      [at("2026-03-02T10:00:00Z"), at("2026-03-02T10:30:00Z")],
    ]);
  });
});
