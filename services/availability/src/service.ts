import { bind, type Stoppable } from "@sched/bus";
import { env } from "@sched/config";
import { availabilityDay, availabilityFreeBusy, availabilityRecommend } from "@sched/proto";
import { defineService, type ServiceDeps } from "@sched/runtime";
import { z } from "zod";
import { dayViewHandler } from "./inbound/dayView.js";
import type { AvailabilityDeps } from "./inbound/deps.js";
import { freeBusyHandler } from "./inbound/freeBusy.js";
import { recommendHandler } from "./inbound/recommend.js";

const config = z.object({
  /** How long `useAI` waits for ai-ranking; past it the heuristic ranking answers. */
  AI_RANKING_TIMEOUT_MS: env.positiveInt(800),
  /** How long the day view waits for a connected calendar's busy time (invites asks Google within its own, shorter deadline). */
  CALENDAR_BUSY_TIMEOUT_MS: env.positiveInt(1_000),
});
type AvailabilityConfig = z.output<typeof config>;

/**
 * Availability: the day view and recommended meeting times. It owns no table
 * (yet): zones and working hours are accounts', busy time meetings', who may
 * see whom contacts', scores ai-ranking's.
 */
export const availabilityService = defineService({
  name: "availability",
  schema: "availability",
  migrations: [],
  config,
  start: (deps) => serveAvailability(deps, Date.now),
});

/** Serves the availability endpoints on the bus; `now` is the clock the handlers read. */
export async function serveAvailability(deps: Omit<ServiceDeps<AvailabilityConfig>, "db">, now: () => number): Promise<Stoppable> {
  const handlerDeps: AvailabilityDeps = { bus: deps.bus, logger: deps.logger, now, aiRankingTimeoutMs: deps.config.AI_RANKING_TIMEOUT_MS, calendarBusyTimeoutMs: deps.config.CALENDAR_BUSY_TIMEOUT_MS };
  return deps.bus.serve({ name: "availability", version: "1.0.0", description: "Day views, free-busy and recommended meeting times" }, [
    bind(availabilityDay, dayViewHandler(handlerDeps)),
    bind(availabilityFreeBusy, freeBusyHandler(handlerDeps)),
    bind(availabilityRecommend, recommendHandler(handlerDeps)),
  ]);
}
