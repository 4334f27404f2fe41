import { hrTime, millisToHrTime } from "@opentelemetry/core";
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type HistogramMetricData,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics";
import { ValueType } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { HistogramSet, HistogramSeries, LocalHistogram } from "./localHistograms.js";

/** The scope the SDK's own instruments are under (metrics.ts's meter), so both read alike on /metrics. */
const SCOPE = { name: "@sched/telemetry" };

/**
 * What one reader reads of the local histograms at each collection, in the
 * temporality it asks for: cumulative (Prometheus, OTLP's default) from the
 * start of the set; delta since this reader's last collection, without min
 * and max (they do not subtract), which OTLP allows.
 */
export function histogramProducer(set: HistogramSet, resource: Resource, temporality: AggregationTemporality): MetricProducer {
  const sent = new Map<HistogramSeries, { count: number; sum: number; counts: number[] }>();
  let lastCollection = set.startedAt;
  return {
    collect(): Promise<CollectionResult> {
      const endTime = hrTime();
      const now = Date.now();
      const from = millisToHrTime(temporality === AggregationTemporality.DELTA ? lastCollection : set.startedAt);
      lastCollection = now;
      const read = (histogram: LocalHistogram): HistogramMetricData => ({
        descriptor: { name: histogram.descriptor.name, description: histogram.descriptor.description, unit: histogram.descriptor.unit, valueType: ValueType.DOUBLE },
        aggregationTemporality: temporality,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: [...histogram.series.values()].flatMap((series) => {
          const boundaries = [...histogram.descriptor.boundaries];
          if (temporality === AggregationTemporality.DELTA) {
            const before = sent.get(series) ?? { count: 0, sum: 0, counts: series.counts.map(() => 0) };
            // As the SDK's delta readers, a series with nothing new since the last collection is left out.
            if (series.count === before.count) return [];
            const now = { count: series.count, sum: series.sum, counts: [...series.counts] };
            sent.set(series, now);
            const counts = now.counts.map((c, i) => c - (before.counts[i] ?? 0));
            return [{ attributes: series.attributes, startTime: from, endTime, value: { count: now.count - before.count, sum: now.sum - before.sum, buckets: { boundaries, counts } } }];
          }
          const value = { count: series.count, sum: series.sum, min: series.min, max: series.max, buckets: { boundaries, counts: [...series.counts] } };
          return [{ attributes: series.attributes, startTime: from, endTime, value }];
        }),
      });
      const metrics = set.histograms.filter((h) => h.series.size > 0).map(read);
      return Promise.resolve({ resourceMetrics: { resource, scopeMetrics: metrics.length > 0 ? [{ scope: SCOPE, metrics }] : [] }, errors: [] });
    },
  };
}
