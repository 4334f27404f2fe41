import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import { notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import { dashboardAdminCreateSignInLink, formatTimestamp } from "@sched/proto";
import { issueSignInLink } from "../links.js";
import type { AccountsClient } from "../../outbound/accounts.js";

/** `POST /admin/v1/users/:id/sign-in-links`: an operator's link for a user (the gateway checked the admin token). */
export function signInLinkBindings(db: Knex, accounts: AccountsClient, dashboardUrl: string): EndpointBinding[] {
  return [
    bind(dashboardAdminCreateSignInLink, async ({ params }) => {
      const user = isId("usr", params.id) ? await accounts.userById(params.id) : undefined;
      if (!user) throw notFound("user");
      const link = await issueSignInLink(db, dashboardUrl, user.id);
      return { status: 201, body: { url: link.url, expiresAt: formatTimestamp(link.expiresAt) } };
    }),
  ];
}
