import { sweepExpiredIdempotencyKeys } from "@sched/db/idempotent-writes";
import { defineService } from "@sched/runtime";
import { z } from "zod";
import { migrations } from "./db/migrations/index.js";
import { consumeAccountNames } from "./consumers/accountNames.js";
import { contactRouteBindings } from "./inbound/contacts.js";
import { visibilityBindings } from "./inbound/visibility.js";

/** Trusted contacts and the visibility question "may A see B?". */
export const contactsService = defineService({
  name: "contacts",
  schema: "contacts",
  migrations,
  config: z.object({}),
  async start({ bus, db, logger }) {
    const served = await bus.serve({ name: "contacts", version: "1.0.0", description: "Trusted contacts and visibility" }, [
      ...contactRouteBindings({ db, bus, logger }),
      ...visibilityBindings(db),
    ]);
    const names = await consumeAccountNames(bus, db, logger);
    const stopSweeping = sweepExpiredIdempotencyKeys(db, logger);
    return {
      stop: async () => {
        await served.stop();
        stopSweeping();
        await names.stop();
      },
    };
  },
});
