import type { Migration } from "@sched/db";
import { createHistory } from "./001_create_history.js";
import { createRelearnQueue } from "./002_relearn_queue.js";
import { seriesOccurrences } from "./003_series_occurrences.js";
import { learnedDays } from "./004_learned_days.js";

/** Every migration of the ai_ranking schema, in order. */
export const migrations: readonly Migration[] = [createHistory, createRelearnQueue, seriesOccurrences, learnedDays];
