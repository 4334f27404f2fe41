import { accountsRoutes } from "./accounts.js";
import { availabilityRoutes } from "./availability.js";
import { contactsRoutes } from "./contacts.js";
import { dashboardRoutes } from "./dashboard.js";
import { invitesRoutes } from "./invites.js";
import { meetingsRoutes } from "./meetings.js";
import type { RouteDef } from "./route.js";
import { timeOffRoutes } from "./timeOff.js";
import { webhooksRoutes } from "./webhooks.js";

/** The gateway's whole route table: every public and admin route of the API. */
export const publicRoutes: RouteDef[] = [...accountsRoutes, ...timeOffRoutes, ...meetingsRoutes, ...availabilityRoutes, ...contactsRoutes, ...invitesRoutes, ...webhooksRoutes, ...dashboardRoutes];
