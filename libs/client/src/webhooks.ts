import { Webhook } from "standardwebhooks";
import type { operations } from "./schema.js";

type WebhookOperation = "meetingCreatedWebhook" | "meetingUpdatedWebhook" | "meetingCancelledWebhook" | "meetingDeletedWebhook";

/** An event as a webhook delivers it, by its `type`. */
export type WebhookEvent = { [K in WebhookOperation]: operations[K]["requestBody"]["content"]["application/json"] }[WebhookOperation];

/** Request headers as Node's `IncomingMessage`, a Fetch `Headers`, or a plain record give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

/**
 * Checks a webhook delivery's Standard Webhooks signature with the endpoint's
 * `whsec_` secret and returns its event; throws when the signature does not
 * verify or the timestamp is more than 5 minutes from now. Pass the body
 * exactly as received (before any JSON parsing), and de-duplicate on
 * `event.id` (the `webhook-id`): a delivery may come more than once.
 */
export function verifyWebhook(body: string | Buffer, headers: WebhookHeaders, secret: string): WebhookEvent {
  const signed = { "webhook-id": header(headers, "webhook-id"), "webhook-timestamp": header(headers, "webhook-timestamp"), "webhook-signature": header(headers, "webhook-signature") };
  return new Webhook(secret).verify(body, signed) as WebhookEvent;
}
