import { runService } from "@sched/runtime";
import { availabilityService } from "./service.js";

await runService(availabilityService);
