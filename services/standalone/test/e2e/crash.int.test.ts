import { createLogger } from "@sched/logging";
import { eventually } from "@sched/testing";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { System } from "../../src/system.js";
import { ADMIN_TOKEN, call } from "../harness.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const CRASHING = fileURLToPath(new URL("../crash/meetingsThenCrash.ts", import.meta.url));

interface Made {
  key: string;
  meetings: Array<{ id: string; participant: string }>;
}

/** Runs the crashing system until it has made its meetings, then kills it (SIGKILL: no shutdown of any kind). */
async function makeMeetingsThenCrash(dataDir: string): Promise<Made> {
  const child = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", CRASHING, dataDir], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  try {
    const line = await eventually(() => {
      if (child.exitCode !== null) throw new Error(`the system exited before its meetings were published: ${output}`);
      return output.split("\n").find((l) => l.startsWith("{"));
    }, 240_000, 100);
    return JSON.parse(line) as Made;
  } finally {
    child.kill("SIGKILL");
    if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
  }
}

it("a standalone system killed after publishing meeting events and before invites handled them delivers every invite once restarted on the same data", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "sched-crash-"));
  let system: System | undefined;
  try {
    const made = await makeMeetingsThenCrash(dataDir);
    // The test polls the invites: a roomy rate limit keeps the polling from being the thing tested.
    const gateway = { standardPerMinute: 100_000 };
    system = await new System({ wiring: { kind: "standalone", dataDir }, logger: createLogger({ name: "e2e", level: "silent" }), port: 0, adminToken: ADMIN_TOKEN, gateway }).start();
    const url = system.url;
    const invitesOf = async (id: string) => {
      const res = await call(url, "GET", `/v1/meetings/${id}/invites`, { key: made.key });
      expect(res.status).toBe(200);
      return res.body.data as Array<{ email: string; state: string }>;
    };
    await eventually(async () => {
      for (const m of made.meetings) if ((await invitesOf(m.id)).length === 0) return false;
      return true;
    }, 60_000, 250);
    for (const m of made.meetings) expect(await invitesOf(m.id)).toEqual([expect.objectContaining({ email: m.participant, state: "simulated" })]);
  } finally {
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 360_000);
