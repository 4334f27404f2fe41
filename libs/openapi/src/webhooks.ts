import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { EVENT_TYPES, Meeting, MeetingInvite, MeetingPrevious, PublicEvent, type EventType } from "@sched/proto";
import { z } from "zod";

const WHAT_HAPPENED: Record<EventType, string> = {
  "meeting.created": "A meeting was created. `data.object` is the meeting as `GET /v1/meetings/:id` answered it then.",
  "meeting.updated": "A meeting changed. `data.object` is the meeting after the change; `data.previous` holds the earlier values of exactly the fields that changed.",
  "meeting.cancelled": "A meeting was cancelled. `data.object` is the cancelled meeting; `data.previous` holds the earlier values of the fields that changed (`status` at least).",
  "meeting.deleted": "A meeting was removed by its organizer. `data.object` is its last state, marked `cancelled`; it answers 404 from now on.",
  "meeting.response_updated":
    "A participant answered the invitation, or changed their answer (from their calendar client's e-mail reply, or the organizer's Google, Microsoft or CalDAV calendar). `data.object` is the meeting with its `attendees`; `data.previous.attendees` holds only the participant who answered, with their earlier answer.",
  "invite.sent":
    "An invite (a request or a cancellation) was handed to the provider: Google, the CalDAV server, or the mail relay. `data.object` is the invite as `GET /v1/meetings/:id/invites` lists it. In test mode nothing is sent: each simulated invite is a test `invite.sent` event whose `state` is `simulated`.",
  "invite.failed": "An invite was given up after its last try (or refused for good by the provider). `data.object` is the invite as `GET /v1/meetings/:id/invites` lists it, `lastError` saying why. Never in test mode.",
};

/** What `data` holds for an event type: an invite for `invite.*`, else a meeting and, for some, its earlier values. */
const dataOf = (type: EventType) =>
  type.startsWith("invite.")
    ? z.object({ object: MeetingInvite.meta({ description: "The invite as `GET /v1/meetings/:id/invites` lists it." }) })
    : z.object({ object: Meeting.meta({ description: "The meeting as `GET /v1/meetings/:id` returns it." }), previous: MeetingPrevious.optional() });

const SIGNATURE_HEADERS = z.object({
  "webhook-id": z.string().meta({ description: "The event id (`evt_…`): the same on every retry and resend, so a receiver can drop repeats.", example: "evt_3nR8sVbQ2xL7tKmP0aZcY9dF" }),
  "webhook-timestamp": z.string().meta({ description: "When the attempt was signed, in Unix seconds; refuse one too far from now (Standard Webhooks suggests 5 minutes).", example: "1898380800" }),
  "webhook-signature": z.string().meta({
    description:
      "`v1,<base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<body>\">`, keyed with the base64 part of the endpoint's `whsec_` secret; for a day after a roll, a second signature by the old secret follows, separated by a space. Any one that verifies is enough.",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  }),
});

/**
 * The OpenAPI 3.1 `webhooks` section: what each event type's delivery POSTs
 * to a webhook endpoint, with the Standard Webhooks headers that sign it.
 */
export function registerWebhooks(registry: OpenAPIRegistry): void {
  for (const type of EVENT_TYPES) {
    registry.registerWebhook({
      method: "post",
      path: type,
      operationId: `${type.replace(/\.(\w)/, (_m, c: string) => c.toUpperCase())}Webhook`,
      summary: `${type} event`,
      description: `${WHAT_HAPPENED[type]} Delivered as the Standard Webhooks specification says; any 2xx within 10 seconds is delivered, anything else is retried with exponential back-off for 3 days. The events of one meeting arrive in order.`,
      tags: ["Webhooks"],
      request: {
        headers: SIGNATURE_HEADERS,
        body: { required: true, content: { "application/json": { schema: PublicEvent.extend({ type: z.literal(type).meta({ description: "The event type." }), data: dataOf(type).meta({ description: "What the event is about: the meeting (with its earlier values, for changes) or the invite." }) }) } } },
      },
      responses: { 200: { description: "Any 2xx acknowledges the delivery; the body is not read past 64 KiB and not kept." } },
    });
  }
}
