import { runService } from "@sched/runtime";
import { invitesService } from "./service.js";

await runService(invitesService);
