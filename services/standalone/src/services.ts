import { accountsService } from "@sched/accounts";
import { aiRankingService } from "@sched/ai-ranking";
import { availabilityService } from "@sched/availability";
import { contactsService } from "@sched/contacts";
import { invitesService } from "@sched/invites";
import { meetingsService } from "@sched/meetings";
import type { ServiceModule } from "@sched/runtime";
import { webhooksService } from "@sched/webhooks";

/** Every bus service of the product. */
export const serviceModules = [accountsService, contactsService, meetingsService, availabilityService, aiRankingService, invitesService, webhooksService] as unknown as ServiceModule[];
