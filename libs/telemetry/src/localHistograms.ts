import type { Attributes } from "@opentelemetry/api";

// The request-path histograms (gateway requests, bus requests on both ends,
// events consumed) are aggregated here rather than in @opentelemetry/sdk-metrics:
// the SDK has no bound instruments and hashes every record's attributes
// (sorting and stringifying them) to find its series, several µs on every
// request. Here a series is found by a key the caller builds from its labels,
// and the SDK's readers read the series at each collection through a metric
// producer (histogramProducer.ts): the same names, units, buckets, labels and
// points on /metrics and over OTLP.

/** Series one histogram keeps at most, as the SDK's default cardinality limit; the rest go to one overflow series. */
export const MAX_SERIES = 2_000;
const OVERFLOW_KEY = "\u0000overflow";
const OVERFLOW_ATTRIBUTES: Attributes = Object.freeze({ "otel.metric.overflow": true });

export interface HistogramSeries {
  readonly attributes: Attributes;
  /** counts[i]: values ≤ boundaries[i] and above the bound before; the last, values above every bound. */
  readonly counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

export interface HistogramDescriptor {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly boundaries: readonly number[];
}

export class LocalHistogram {
  readonly series = new Map<string, HistogramSeries>();

  constructor(readonly descriptor: HistogramDescriptor) {}

  /** Records `value` in the series `key` names; `attributes` is asked only when the series is new. */
  record(value: number, key: string, attributes: () => Attributes): void {
    if (Number.isNaN(value)) return;
    let series = this.series.get(key);
    if (!series) {
      const full = this.series.size >= MAX_SERIES;
      series = full ? this.series.get(OVERFLOW_KEY) : undefined;
      if (!series) {
        series = { attributes: full ? OVERFLOW_ATTRIBUTES : Object.freeze({ ...attributes() }), counts: new Array<number>(this.descriptor.boundaries.length + 1).fill(0), count: 0, sum: 0, min: Infinity, max: -Infinity };
        this.series.set(full ? OVERFLOW_KEY : key, series);
      }
    }
    const bounds = this.descriptor.boundaries;
    let i = 0;
    while (i < bounds.length && (bounds[i] as number) < value) i++;
    (series.counts as number[])[i] = (series.counts[i] as number) + 1;
    series.count += 1;
    series.sum += value;
    if (value < series.min) series.min = value;
    if (value > series.max) series.max = value;
  }
}

/** The histograms of one running telemetry SDK, and when they began. */
export interface HistogramSet {
  readonly startedAt: number;
  readonly histograms: readonly LocalHistogram[];
}
