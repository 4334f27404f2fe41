import { metrics, type Counter, type MeterProvider, type ObservableGauge, type ObservableResult } from "@opentelemetry/api";
import { LocalHistogram, type HistogramSet } from "./localHistograms.js";

/** Latency buckets in seconds: from a cached lookup to a request at its deadline. */
const SECONDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Instruments {
  rateLimited: Counter;
  busErrors: Counter;
  busTimeouts: Counter;
  eventsPublished: Counter;
  outboxLag: ObservableGauge;
  inviteDeliveries: Counter;
}

let made: { provider: MeterProvider; instruments: Instruments } | undefined;

/**
 * The instruments, made from the meter provider registered now: the API hands
 * out no-op instruments before the SDK starts and does not upgrade them later.
 */
function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (made?.provider === provider) return made.instruments;
  const meter = provider.getMeter("@sched/telemetry");
  const created: Instruments = {
    rateLimited: meter.createCounter("sched.gateway.rate_limited", { description: "Requests refused with 429 by the rate limits, by route" }),
    busErrors: meter.createCounter("sched.bus.errors", { description: "Bus failures by subject, side and type" }),
    busTimeouts: meter.createCounter("sched.bus.timeouts", { description: "Bus requests that got no reply before their deadline, by subject" }),
    eventsPublished: meter.createCounter("sched.bus.events.published", { description: "Events stored on the bus, by subject and outcome" }),
    outboxLag: meter.createObservableGauge("sched.outbox.lag", { description: "Age of the oldest outbox row not yet published (0 when none)", unit: "s" }),
    inviteDeliveries: meter.createCounter("sched.invites.deliveries", { description: "Invitation deliveries by state and channel" }),
  };
  made = { provider, instruments: created };
  return created;
}

/** The request-path histograms, aggregated locally (localHistograms.ts) and read by the SDK's readers. */
interface Histograms {
  httpDuration: LocalHistogram;
  busClientDuration: LocalHistogram;
  busServerDuration: LocalHistogram;
  consumerDuration: LocalHistogram;
}

function makeHistograms(): Histograms {
  const histogram = (name: string, description: string) => new LocalHistogram({ name, description, unit: "s", boundaries: SECONDS });
  return {
    httpDuration: histogram("sched.http.server.duration", "Gateway requests by route, method and status"),
    busClientDuration: histogram("sched.bus.client.duration", "Bus requests sent, by subject and outcome"),
    busServerDuration: histogram("sched.bus.server.duration", "Bus requests handled, by subject and outcome"),
    consumerDuration: histogram("sched.bus.consumer.duration", "Events handled by consumers, by subject and outcome"),
  };
}

// On globalThis, as the SDK's holder, so a second copy of this module (source and build side by side) records into the running set.
const HISTOGRAMS = Symbol.for("@sched/telemetry.histograms");
const slot = globalThis as { [HISTOGRAMS]?: Histograms };

/** A fresh set of histograms for a starting SDK to read; recording is a no-op until then, as the API's instruments are. */
export function beginHistograms(): HistogramSet {
  const made = makeHistograms();
  slot[HISTOGRAMS] = made;
  return { startedAt: Date.now(), histograms: Object.values(made) };
}

/** Stops recording (the SDK is shut down). */
export function endHistograms(): void {
  slot[HISTOGRAMS] = undefined;
}

const seconds = (startMs: number) => (performance.now() - startMs) / 1_000;

/** A start time for the `*Since` recorders. */
export const now = (): number => performance.now();

/** One gateway request, from route match to the response being sent. */
export function recordHttpRequest(route: string, method: string, status: number, startedAt: number): void {
  slot[HISTOGRAMS]?.httpDuration.record(seconds(startedAt), `${route}\u0000${method}\u0000${status}`, () => ({ route, method, status }));
  if (status === 429) instruments().rateLimited.add(1, { route });
}

const subjectOutcomeKey = (subject: string, outcome: string) => `${subject}\u0000${outcome}`;

/** How a bus request ended, as seen by the side recording it. */
export type BusOutcome = "ok" | "client_error" | "server_error" | "timeout" | "no_responders" | "unavailable";

export function recordBusRequest(side: "client" | "server", subject: string, outcome: BusOutcome, startedAt: number): void {
  const histograms = slot[HISTOGRAMS];
  if (histograms) (side === "client" ? histograms.busClientDuration : histograms.busServerDuration).record(seconds(startedAt), subjectOutcomeKey(subject, outcome), () => ({ subject, outcome }));
  if (outcome === "timeout") instruments().busTimeouts.add(1, { subject });
  if (outcome !== "ok" && outcome !== "client_error") instruments().busErrors.add(1, { subject, side, type: outcome });
}

export function recordEventPublished(subject: string, ok: boolean): void {
  instruments().eventsPublished.add(1, { subject, outcome: ok ? "ok" : "failed" });
  if (!ok) instruments().busErrors.add(1, { subject, side: "publisher", type: "publish_failed" });
}

/** `ack`: handled; `retry`: failed and redelivered later; `given_up`: failed on its last delivery. */
export type ConsumeOutcome = "ack" | "retry" | "given_up";

export function recordEventConsumed(subject: string, outcome: ConsumeOutcome, startedAt: number): void {
  slot[HISTOGRAMS]?.consumerDuration.record(seconds(startedAt), subjectOutcomeKey(subject, outcome), () => ({ subject, outcome }));
  if (outcome !== "ack") instruments().busErrors.add(1, { subject, side: "consumer", type: outcome });
}

/**
 * Reports an outbox's lag at every collection. `lag` returns undefined when
 * this replica does not know (another one holds the relay lock, and reports
 * it). Returns the function that stops reporting.
 */
export function observeOutboxLag(lag: () => { outbox: string; seconds: number } | undefined): () => void {
  const gauge = instruments().outboxLag;
  const callback = (result: ObservableResult) => {
    const now = lag();
    if (now !== undefined) result.observe(now.seconds, { outbox: now.outbox });
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}

/** One invitation delivery reaching a state (`sent`, `simulated`, `failed`, `retrying`) through a channel (`google`, `email`). */
export function recordInviteDelivery(state: string, channel?: string): void {
  instruments().inviteDeliveries.add(1, channel ? { state, channel } : { state });
}
