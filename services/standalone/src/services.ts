import { accountsService } from "@sched/accounts";
import { aiRankingService } from "@sched/ai-ranking";
import { availabilityService } from "@sched/availability";
import { contactsService } from "@sched/contacts";
import { meetingsService } from "@sched/meetings";
import type { ServiceModule } from "@sched/runtime";

/** Every bus service of the product. */
export const serviceModules = [accountsService, contactsService, meetingsService, availabilityService, aiRankingService] as unknown as ServiceModule[];
