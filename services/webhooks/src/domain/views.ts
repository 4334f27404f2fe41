import { formatTimestamp } from "@sched/proto";
import type { WebhookDelivery, WebhookEndpoint } from "@sched/proto";
import type { DeliveryView, EndpointRecord } from "../db/queries.js";

export { formatTimestamp };

/** An endpoint as the API shows it: never its secret. */
export function endpointView(e: EndpointRecord): WebhookEndpoint {
  return { id: e.id, url: e.url, events: e.events as WebhookEndpoint["events"], description: e.description, enabled: e.enabled, mode: e.mode, createdAt: formatTimestamp(e.createdAt) };
}

export function deliveryView(d: DeliveryView): WebhookDelivery {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    state: d.state,
    attempts: d.attempts.map((a) => ({ at: formatTimestamp(a.at), status: a.status, error: a.error, durationMs: a.durationMs })),
    nextAttemptAt: d.nextAttemptAt ? formatTimestamp(d.nextAttemptAt) : null,
    createdAt: formatTimestamp(d.createdAt),
  };
}
