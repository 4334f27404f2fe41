import { accountsAdminCreateKey, accountsAdminCreateUser } from "@sched/proto";
import type { Bus } from "@sched/bus";
import { z } from "zod";

const Created = z.object({ id: z.string() });
const CreatedKey = z.object({ key: z.string() });

/** Creates the demo user and a test-mode key, through the same endpoints the admin API uses. */
export async function createDemoUser(bus: Bus, timezone: string): Promise<{ email: string; key: string }> {
  const email = "demo@example.com";
  const user = await bus.request(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Demo User", timezone } });
  const { id } = Created.parse(user.body);
  const key = await bus.request(accountsAdminCreateKey, { params: { id }, query: {}, body: { mode: "test", name: "demo" } });
  return { email, key: CreatedKey.parse(key.body).key };
}
