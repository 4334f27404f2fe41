import { bind, type Bus, type EndpointBinding, replyBodyBudget, requireCaller } from "@sched/bus";
import { writeOnce } from "@sched/db/idempotent-writes";
import type { Knex } from "@sched/db";
import { AppError, notFound } from "@sched/errors";
import { isId, newId } from "@sched/ids";
import { eventsGet, eventsList, eventsResend, JsonText } from "@sched/proto";
import { findEvent, listDeliveries, listEvents, queueResend } from "../db/queries.js";
import { meetingIdOf } from "../domain/publicEvent.js";
import { deliveryView } from "../domain/views.js";

const DEFAULT_PAGE_SIZE = 20;

/**
 * `GET /v1/events` (newest first, the last 30 days), one event, and resend.
 * A page stops short of `limit` (with `hasMore`) where more events would not
 * fit one bus message: a meeting's description alone may be 10,000 characters.
 */
export function eventBindings(db: Knex, bus: Bus, queued: () => void): EndpointBinding[] {
  return [
    bind(eventsList, async ({ query }, ctx) => {
      const caller = requireCaller(ctx);
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      let afterSeq: number | undefined;
      if (query.startingAfter !== undefined) {
        const after = isId("evt", query.startingAfter) ? await findEvent(db, caller.userId, caller.mode, query.startingAfter) : undefined;
        if (!after) throw new AppError("invalid_request", "Invalid startingAfter: no event with this id in the last 30 days.", { param: "startingAfter" });
        afterSeq = after.seq;
      }
      const page = await listEvents(db, { userId: caller.userId, mode: caller.mode, ...(query.type ? { type: query.type } : {}), ...(afterSeq !== undefined ? { afterSeq } : {}), limit });
      const budget = replyBodyBudget(bus.maxMessageBytes());
      const items: string[] = [];
      let bytes = 32;
      for (const event of page.events) {
        const text = JSON.stringify(event);
        if (budget !== undefined && items.length > 0 && bytes + Buffer.byteLength(text) + 1 > budget) break;
        items.push(text);
        bytes += Buffer.byteLength(text) + 1;
      }
      const hasMore = page.hasMore || items.length < page.events.length;
      return { status: 200, body: new JsonText(`{"data":[${items.join(",")}],"hasMore":${hasMore}}`) };
    }),

    bind(eventsGet, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      const found = isId("evt", params.id) ? await findEvent(db, caller.userId, caller.mode, params.id) : undefined;
      if (!found) throw notFound("event");
      return { status: 200, body: found.event };
    }),

    bind(eventsResend, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      const found = isId("evt", params.id) ? await findEvent(db, caller.userId, caller.mode, params.id) : undefined;
      if (!found) throw notFound("event");
      const resend = { eventSeq: found.seq, userId: caller.userId, mode: caller.mode, type: found.event.type, meetingId: meetingIdOf(found.event) };
      const answer = await writeOnce(db, ctx, { method: "POST", path: `/v1/events/${params.id}/resend`, body: undefined }, async (trx) => {
        const ids = await queueResend(trx, resend, () => newId("whd"));
        const deliveries = ids.length === 0 ? [] : await listDeliveries(trx, { ids });
        return { status: 202 as const, body: { data: deliveries.map(deliveryView) } };
      });
      if (answer.body.data.length > 0) queued();
      return answer;
    }),
  ];
}
