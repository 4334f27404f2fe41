import { eventually, freePort } from "@sched/testing";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DateTime } from "luxon";
import { expect, it } from "vitest";
import { FakeOpenAI } from "../../../ai-ranking/test/fakeOpenAI.js";
import { ADMIN_TOKEN, call, createUserWithKey } from "../harness.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

// `npm start` as a newcomer runs it: the standalone entry point in a process of its own.
it("npm start hands each service its settings from the environment: with OPENAI_API_KEY and AI_MODEL set, recommendations go through the language model", async () => {
  const fake = await new FakeOpenAI().start();
  const dataDir = mkdtempSync(join(tmpdir(), "sched-start-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "services/standalone/src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: "warn", OPENAI_API_KEY: "sk-fake", OPENAI_BASE_URL: fake.baseURL, AI_MODEL: "fake-model" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
      return (await fetch(`${url}/healthz`).catch(() => undefined))?.status === 200;
    }, 90_000, 200);

    const ana = await createUserWithKey(url, { name: "Ana", timezone: "UTC" });
    const bo = await createUserWithKey(url, { name: "Bo", timezone: "UTC" });
    expect((await call(url, "POST", "/v1/contacts", { key: ana.key, body: { email: bo.email } })).status).toBe(201);
    const nextMonday = DateTime.utc().startOf("week").plus({ weeks: 1 });
    const body = { participants: [bo.email], duration: "1 hour", from: nextMonday.toISODate(), to: nextMonday.plus({ days: 4 }).toISODate(), limit: 5, useAI: true };
    const ranked = await call(url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    expect(ranked.status).toBe(200);
    expect(ranked.body.rankedBy).toBe("ai");
    expect(fake.bodies).toHaveLength(1);
    expect(JSON.parse(fake.bodies[0]!).model).toBe("fake-model");
  } finally {
    child.kill("SIGTERM");
    if (child.exitCode === null) await once(child, "exit");
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);
