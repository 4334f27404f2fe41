import { accountsAdminCreateKey, accountsAdminCreateUser, dashboardAdminCreateSignInLink, SignInLinkCreated } from "@sched/proto";
import type { Bus } from "@sched/bus";
import { z } from "zod";

const Created = z.object({ id: z.string() });
const CreatedKey = z.object({ key: z.string() });

/** Creates the demo user, a test-mode key and a dashboard sign-in link, through the same endpoints the admin API uses. */
export async function createDemoUser(bus: Bus, timezone: string): Promise<{ email: string; key: string; signInLink: z.infer<typeof SignInLinkCreated> }> {
  const email = "demo@example.com";
  const user = await bus.request(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Demo User", timezone } });
  const { id } = Created.parse(user.body);
  const key = await bus.request(accountsAdminCreateKey, { params: { id }, query: {}, body: { mode: "test", name: "demo" } });
  const link = await bus.request(dashboardAdminCreateSignInLink, { params: { id }, query: {}, body: undefined });
  return { email, key: CreatedKey.parse(key.body).key, signInLink: SignInLinkCreated.parse(link.body) };
}
