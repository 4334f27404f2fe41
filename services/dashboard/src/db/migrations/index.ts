import type { Migration } from "@sched/db";
import { createSignIn } from "./001_create_sign_in.js";
import { createRequestLog } from "./002_create_request_log.js";

/** Every migration of the dashboard schema, in order. */
export const migrations: readonly Migration[] = [createSignIn, createRequestLog];
