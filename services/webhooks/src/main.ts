import { runService } from "@sched/runtime";
import { webhooksService } from "./service.js";

await runService(webhooksService);
