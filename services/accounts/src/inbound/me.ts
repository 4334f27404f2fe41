import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { notFound } from "@sched/errors";
import { accountsGetMe, accountsUpdateMe, callerChanged, userUpdated } from "@sched/proto";
import { requireTimeZone } from "../domain/timeZone.js";
import { effectiveChanges, profileView, type ProfileChanges } from "../domain/users.js";
import { checkWorkingHours } from "../domain/workingHours.js";
import { applyPreferences } from "../domain/preferences.js";
import { changeUser, findUser } from "../db/queries.js";
import { announceUser } from "../outbound/events.js";
import type { OutboxRelay } from "@sched/outbox";

/** GET and PATCH /v1/me (api-decisions 4). */
export function meBindings(db: Knex, bus: Bus, relay: Pick<OutboxRelay, "wake">): EndpointBinding[] {
  return [
    bind(accountsGetMe, async (_request, ctx) => {
      const user = await findUser(db, requireCaller(ctx).userId);
      if (!user) throw notFound("user");
      return { status: 200, body: profileView(user) };
    }),

    bind(accountsUpdateMe, async ({ body }, ctx) => {
      const caller = requireCaller(ctx);
      const wanted: ProfileChanges = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.timezone !== undefined ? { timezone: requireTimeZone(body.timezone) } : {}),
        ...(body.workingHours !== undefined ? { workingHours: checkWorkingHours(body.workingHours) } : {}),
      };
      const result = await changeUser(db, caller.userId, (current) =>
          effectiveChanges(current, body.preferences ? { ...wanted, preferences: applyPreferences(current.preferences, body.preferences) } : wanted),
        announceUser(userUpdated),
      );
      if (!result) throw notFound("user");
      if (result.changed) relay.wake();
      // Gateways cache the caller, zone and working hours included, and services read naive times
      // in that zone: every replica must forget it before the 200 can reach the client (see
      // docs/design.md, "Identity"). Sent whenever a zone or working hours are given, so a retry
      // after a failed notice sends it again.
      if (body.timezone !== undefined || body.workingHours !== undefined) await bus.notify(callerChanged, { userId: caller.userId });
      return { status: 200, body: profileView(result.user) };
    }),
  ];
}
