import { startOutboxRelay } from "@sched/outbox";
import { userCreated, userUpdated } from "@sched/proto";
import { defineService } from "@sched/runtime";
import { z } from "zod";
import { migrations } from "./db/migrations/index.js";
import { adminBindings } from "./inbound/admin.js";
import { internalBindings } from "./inbound/internal.js";
import { meBindings } from "./inbound/me.js";
import { ownKeyBindings } from "./inbound/ownKeys.js";

/** Users, their API keys, and who a key acts for. */
export const accountsService = defineService({
  name: "accounts",
  schema: "accounts",
  migrations,
  config: z.object({}),
  async start({ bus, db, logger }) {
    // Every write wakes the relay (inbound/admin.ts, me.ts).
    const relay = startOutboxRelay({ db, bus, logger, events: [userCreated, userUpdated], wokenByEveryWrite: true });
    const served = await bus.serve({ name: "accounts", version: "1.0.0", description: "Users, API keys and authentication" }, [
      ...internalBindings(db),
      ...meBindings(db, bus, relay),
      ...adminBindings(db, bus, relay),
      ...ownKeyBindings(db, bus),
    ]);
    return {
      stop: async () => {
        await served.stop();
        await relay.stop();
      },
    };
  },
});
