import { loadavg } from "node:os";
import { callApi } from "../lib/api.js";
import type { Attempt } from "./domain/attempts.js";
import { UPDATED_SUFFIX, type CreateRecord, type UpdateRecord } from "./domain/writes.js";
import { WriteClient, type ClientLimits } from "./client.js";

/** One fault under traffic: what was sent, and what the client was told. */
export interface PhaseRun {
  fault: string;
  apiKey: string;
  /** Every meeting of the phase invites these two, and nobody else gets its e-mails. */
  participants: string[];
  creates: CreateRecord[];
  updates: UpdateRecord[];
  attempts: Attempt[];
  /** When the fault began (epoch ms), and how long breaking and restarting took. */
  faultAt: number;
  faultMs: number;
  /** The machine's one-minute load average when the fault began: the figures of a busy machine read differently. */
  loadAverage: number;
}

export interface PhasePlan {
  fault: string;
  gatewayUrl: string;
  adminToken: string;
  /** Writes started per second, and for how long. */
  rate: number;
  seconds: number;
  limits: ClientLimits;
  /** Breaks something and brings it back; resolves once it is back. */
  inject: () => Promise<void>;
}

/** Every third write updates a meeting the phase created before, if one is waiting; the rest create. */
const UPDATE_EVERY = 3;
const DAY_MS = 24 * 60 * 60_000;

/**
 * Runs one fault: a user of its own with a live key (so invites are
 * e-mailed), writes at a steady rate, the fault a quarter of the way in, and
 * resolves once every write has its verdict.
 */
export async function runPhase(plan: PhasePlan): Promise<PhaseRun> {
  const slug = plan.fault.replace(/[^a-z0-9]+/g, "-");
  const apiKey = await liveKey(plan.gatewayUrl, plan.adminToken, `organizer-${slug}@faults.example`);
  const participants = [`first-${slug}@faults.example`, `second-${slug}@faults.example`];
  const client = new WriteClient(plan.gatewayUrl, apiKey, plan.limits);
  const creates: CreateRecord[] = [];
  const updates: UpdateRecord[] = [];
  const updatable: Array<{ id: string; key: string }> = [];
  const writes: Array<Promise<void>> = [];

  const start = Date.now();
  const total = plan.rate * plan.seconds;
  const faultIndex = Math.floor(total / 4);
  let fault: Promise<void> = Promise.resolve();
  let faultAt = start;
  let faultMs = 0;
  let loadAverage = 0;
  // A week ahead, one meeting a quarter hour apart: never in the past, so every update is allowed.
  const firstStart = Math.ceil((start + 7 * DAY_MS) / 900_000) * 900_000;
  for (let i = 0; i < total; i++) {
    await sleepUntil(start + (i * 1_000) / plan.rate);
    if (i === faultIndex) {
      faultAt = Date.now();
      loadAverage = loadavg()[0]!;
      fault = plan.inject().then(() => void (faultMs = Date.now() - faultAt));
    }
    const target = i % UPDATE_EVERY === UPDATE_EVERY - 1 ? updatable.shift() : undefined;
    if (target) {
      writes.push(client.update(target.id, { title: `${target.key}${UPDATED_SUFFIX}` }).then((verdict) => void updates.push({ meetingId: target.id, verdict })));
      continue;
    }
    const key = `${slug}-${String(i).padStart(5, "0")}`;
    const body = { title: key, duration: "30 mins", startTime: new Date(firstStart + i * 900_000).toISOString(), participants };
    writes.push(
      client.create(key, body).then((verdict) => {
        creates.push({ key, verdict });
        if (verdict.kind === "accepted") updatable.push({ id: verdict.id, key });
      }),
    );
  }
  await Promise.all([...writes, fault]);
  return { fault: plan.fault, apiKey, participants, creates, updates, attempts: client.attempts, faultAt, faultMs, loadAverage };
}

/** A user with a live-mode key holding every scope, its limits out of the way of the suite's rate. */
async function liveKey(url: string, adminToken: string, email: string): Promise<string> {
  const expect = async (what: string, status: number, call: Promise<{ status: number; body: unknown }>) => {
    const res = await call;
    if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  };
  const user = await expect("user create", 201, callApi(url, "POST", "/admin/v1/users", { token: adminToken, body: { email, name: "Fault suite", timezone: "UTC" } }));
  const key = await expect("key create", 201, callApi(url, "POST", `/admin/v1/users/${String(user.id)}/api-keys`, { token: adminToken, body: { mode: "live" } }));
  await expect("key limits", 200, callApi(url, "PATCH", `/admin/v1/api-keys/${String(key.id)}`, { token: adminToken, body: { rateLimits: { standardPerMinute: 1_000_000, aiPerMinute: 1_000_000 } } }));
  return String(key.key);
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}
