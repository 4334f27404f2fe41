import { runService } from "@sched/runtime";
import { contactsService } from "./service.js";

await runService(contactsService);
