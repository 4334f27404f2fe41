import { metrics, type Counter, type Histogram, type MeterProvider, type ObservableGauge, type ObservableResult } from "@opentelemetry/api";

/** Latency buckets in seconds: from a cached lookup to a request at its deadline. */
const SECONDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Instruments {
  httpDuration: Histogram;
  rateLimited: Counter;
  busClientDuration: Histogram;
  busServerDuration: Histogram;
  busErrors: Counter;
  busTimeouts: Counter;
  eventsPublished: Counter;
  consumerDuration: Histogram;
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
  const seconds = { unit: "s", advice: { explicitBucketBoundaries: SECONDS } };
  const created: Instruments = {
    httpDuration: meter.createHistogram("sched.http.server.duration", { description: "Gateway requests by route, method and status", ...seconds }),
    rateLimited: meter.createCounter("sched.gateway.rate_limited", { description: "Requests refused with 429 by the rate limits, by route" }),
    busClientDuration: meter.createHistogram("sched.bus.client.duration", { description: "Bus requests sent, by subject and outcome", ...seconds }),
    busServerDuration: meter.createHistogram("sched.bus.server.duration", { description: "Bus requests handled, by subject and outcome", ...seconds }),
    busErrors: meter.createCounter("sched.bus.errors", { description: "Bus failures by subject, side and type" }),
    busTimeouts: meter.createCounter("sched.bus.timeouts", { description: "Bus requests that got no reply before their deadline, by subject" }),
    eventsPublished: meter.createCounter("sched.bus.events.published", { description: "Events stored on the bus, by subject and outcome" }),
    consumerDuration: meter.createHistogram("sched.bus.consumer.duration", { description: "Events handled by consumers, by subject and outcome", ...seconds }),
    outboxLag: meter.createObservableGauge("sched.outbox.lag", { description: "Age of the oldest outbox row not yet published (0 when none)", unit: "s" }),
    inviteDeliveries: meter.createCounter("sched.invites.deliveries", { description: "Invitation deliveries by state and channel" }),
  };
  made = { provider, instruments: created };
  return created;
}

const seconds = (startMs: number) => (performance.now() - startMs) / 1_000;

/** A start time for the `*Since` recorders. */
export const now = (): number => performance.now();

/** One gateway request, from route match to the response being sent. */
export function recordHttpRequest(route: string, method: string, status: number, startedAt: number): void {
  instruments().httpDuration.record(seconds(startedAt), { route, method, status });
  if (status === 429) instruments().rateLimited.add(1, { route });
}

/** How a bus request ended, as seen by the side recording it. */
export type BusOutcome = "ok" | "client_error" | "server_error" | "timeout" | "no_responders" | "unavailable";

export function recordBusRequest(side: "client" | "server", subject: string, outcome: BusOutcome, startedAt: number): void {
  const i = instruments();
  (side === "client" ? i.busClientDuration : i.busServerDuration).record(seconds(startedAt), { subject, outcome });
  if (outcome === "timeout") i.busTimeouts.add(1, { subject });
  if (outcome !== "ok" && outcome !== "client_error") i.busErrors.add(1, { subject, side, type: outcome });
}

export function recordEventPublished(subject: string, ok: boolean): void {
  instruments().eventsPublished.add(1, { subject, outcome: ok ? "ok" : "failed" });
  if (!ok) instruments().busErrors.add(1, { subject, side: "publisher", type: "publish_failed" });
}

/** `ack`: handled; `retry`: failed and redelivered later; `given_up`: failed on its last delivery. */
export type ConsumeOutcome = "ack" | "retry" | "given_up";

export function recordEventConsumed(subject: string, outcome: ConsumeOutcome, startedAt: number): void {
  instruments().consumerDuration.record(seconds(startedAt), { subject, outcome });
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
