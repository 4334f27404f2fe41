import { runService } from "@sched/runtime";
import { dashboardService } from "./service.js";

await runService(dashboardService);
