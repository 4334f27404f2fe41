import { AggregationTemporality, MeterProvider, MetricReader, type HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { describe, expect, it } from "vitest";
import { histogramProducer } from "../src/histogramProducer.js";
import { LocalHistogram, MAX_SERIES } from "../src/localHistograms.js";

const BOUNDS = [0.002, 0.005, 0.01, 0.025];
const VALUES = [0.001, 0.002, 0.0021, 0.005, 0.009, 0.01, 0.3, 0, 12, Number.NaN];
const resource = resourceFromAttributes({ "service.name": "test" });
type Points = Array<{ attributes: unknown; value: { count: number; sum?: number; min?: number; max?: number } }>;

class Reader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The same values through the SDK's own histogram and through a local one, read by readers of the same temporality. */
async function bothWays(temporality: AggregationTemporality, rounds: number[][], { minMax = true } = {}) {
  const sdkReader = new Reader({ aggregationTemporalitySelector: () => temporality });
  const provider = new MeterProvider({ resource, readers: [sdkReader] });
  const sdkHistogram = provider.getMeter("m").createHistogram("h", { unit: "s", description: "d", advice: { explicitBucketBoundaries: BOUNDS } });
  const local = new LocalHistogram({ name: "h", description: "d", unit: "s", boundaries: BOUNDS });
  const localReader = new Reader({ metricProducers: [histogramProducer({ startedAt: Date.now(), histograms: [local] }, resource, temporality)] });
  new MeterProvider({ resource, readers: [localReader] });
  const points = async (reader: Reader) => {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === "h") as HistogramMetricData | undefined;
    return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value }));
  };
  // Sums are compared to 12 digits: the SDK adds a cumulative series' sum up from its deltas, in another order.
  const same = (local: Points, sdk: Points) => {
    expect(local.map((p) => ({ ...p, value: { ...p.value, sum: 0 } }))).toEqual(sdk.map((p) => ({ ...p, value: { ...p.value, sum: 0 } })));
    for (const [i, p] of local.entries()) expect(p.value.sum).toBeCloseTo(sdk[i]?.value.sum ?? Number.NaN, 12);
  };
  const collected: Array<{ sdk: Points; local: Points }> = [];
  for (const values of rounds) {
    for (const [i, v] of values.entries()) {
      const attributes = { route: i % 2 === 0 ? "/a" : "/b", status: 200 };
      sdkHistogram.record(v, attributes);
      local.record(v, `${attributes.route}|${attributes.status}`, () => attributes);
    }
    const round = { sdk: await points(sdkReader), local: await points(localReader) };
    // Delta points carry no min and max (they do not subtract); the SDK's do.
    if (!minMax) for (const p of round.sdk) p.value = { ...p.value, min: undefined, max: undefined };
    same(round.local, round.sdk);
    collected.push(round);
  }
  await provider.shutdown();
  return collected;
}

describe("local histograms", () => {
  it("give the SDK's own cumulative points: buckets (upper bound inclusive), count, sum, min and max per series", async () => {
    const [first, second] = await bothWays(AggregationTemporality.CUMULATIVE, [VALUES, VALUES.slice(3)]);
    expect(first?.local.map((p) => p.value)).toEqual([
      { count: 5, sum: 0.001 + 0.0021 + 0.009 + 0.3 + 12, min: 0.001, max: 12, buckets: { boundaries: BOUNDS, counts: [1, 1, 1, 0, 2] } },
      { count: 4, sum: 0.002 + 0.005 + 0.01 + 0, min: 0, max: 0.01, buckets: { boundaries: BOUNDS, counts: [2, 1, 1, 0, 0] } },
    ]);
    expect(second?.local.map((p) => p.value.count)).toEqual([8, 7]);
  });

  it("give delta points since the reader's last collection, without min and max", async () => {
    const [first, second, third] = await bothWays(AggregationTemporality.DELTA, [VALUES, VALUES.slice(3), []], { minMax: false });
    expect(first?.local.map((p) => p.value.count)).toEqual([5, 4]);
    expect(second?.local.map((p) => [p.value.count, p.value.min, p.value.max])).toEqual([[3, undefined, undefined], [3, undefined, undefined]]);
    expect(third?.local).toEqual([]);
  });

  it("fold series past the limit into one overflow series", () => {
    const local = new LocalHistogram({ name: "h", description: "d", unit: "s", boundaries: BOUNDS });
    for (let i = 0; i < MAX_SERIES + 5; i++) local.record(0.001, `k${i}`, () => ({ k: i }));
    expect(local.series.size).toBe(MAX_SERIES + 1);
    const overflow = [...local.series.values()].find((s) => s.attributes["otel.metric.overflow"] === true);
    expect(overflow?.count).toBe(5);
  });
});
