import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { invitesList, meetingsGet, type Meeting } from "@sched/proto";
import { latestDeliveries } from "../db/queries.js";
import { inviteView } from "../domain/inviteView.js";

/** Meetings answers within this, or the caller gets 503 rather than a hung request. */
const MEETINGS_TIMEOUT_MS = 1_000;

/** GET /v1/meetings/:id/invites: the delivery state of each participant's newest invite, and their answer. */
export function inviteRouteBindings(db: Knex, bus: Bus): EndpointBinding[] {
  return [
    bind(invitesList, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      // Whoever may read the meeting may read its invites: meetings decides, with the same 404 for all others.
      const reply = await bus.request(meetingsGet, { params: { id: params.id }, query: {}, body: undefined }, { caller, timeoutMs: MEETINGS_TIMEOUT_MS });
      const attendees = new Map((reply.body as Meeting).attendees.map((a) => [a.email, a]));
      const rows = await latestDeliveries(db, params.id);
      return { status: 200, body: { data: rows.map((row) => inviteView(row, attendees.get(row.email))) } };
    }),
  ];
}
