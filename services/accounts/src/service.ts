import { defineService } from "@sched/runtime";
import { z } from "zod";
import { migrations } from "./db/migrations/index.js";
import { adminBindings } from "./handlers/admin.js";
import { internalBindings } from "./handlers/internal.js";
import { meBindings } from "./handlers/me.js";

/** Users, their API keys, and who a key acts for. */
export const accountsService = defineService({
  name: "accounts",
  schema: "accounts",
  migrations,
  config: z.object({}),
  async start({ bus, db, logger }) {
    const events = { bus, logger };
    const served = await bus.serve({ name: "accounts", version: "1.0.0", description: "Users, API keys and authentication" }, [
      ...internalBindings(db),
      ...meBindings(db, events),
      ...adminBindings(db, bus, events),
    ]);
    return { stop: () => served.stop() };
  },
});
