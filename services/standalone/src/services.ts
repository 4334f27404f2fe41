import { accountsService } from "@sched/accounts";
import { aiRankingService } from "@sched/ai-ranking";
import { availabilityService } from "@sched/availability";
import { contactsService } from "@sched/contacts";
import { dashboardService } from "@sched/dashboard";
import { invitesService } from "@sched/invites";
import { meetingsService } from "@sched/meetings";
import type { ServiceModule } from "@sched/runtime";
import { webhooksService } from "@sched/webhooks";

/** Every service of the product behind the gateway (the dashboard serves pages of its own too). */
export const serviceModules = [accountsService, contactsService, meetingsService, availabilityService, aiRankingService, invitesService, webhooksService, dashboardService] as unknown as ServiceModule[];
