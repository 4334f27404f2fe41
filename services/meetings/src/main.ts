import { runService } from "@sched/runtime";
import { meetingsService } from "./service.js";

await runService(meetingsService);
