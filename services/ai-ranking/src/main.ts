import { runService } from "@sched/runtime";
import { aiRankingService } from "./service.js";

await runService(aiRankingService);
