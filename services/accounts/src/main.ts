import { runService } from "@sched/runtime";
import { accountsService } from "./service.js";

await runService(accountsService);
