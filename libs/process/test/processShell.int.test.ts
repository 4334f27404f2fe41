import { eventually, freePort } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const FIXTURE = fileURLToPath(new URL("./fixtures/shellProcess.ts", import.meta.url));

interface Running {
  child: ChildProcess;
  output: () => string;
  readyz: () => Promise<number | undefined>;
}

/** Starts the fixture and waits for it to say it started (a loaded machine takes seconds to load tsx). */
async function start(scenario: string): Promise<Running> {
  const healthPort = await freePort();
  const child = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", FIXTURE], {
    env: { ...process.env, SCENARIO: scenario, HEALTH_PORT: String(healthPort), LOG_LEVEL: "info", SHUTDOWN_GRACE_MS: "5000" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  await eventually(() => {
    if (child.exitCode !== null && !output.includes("started")) throw new Error(`exited early: ${output}`);
    return output.includes("started");
  }, 60_000, 50);
  const readyz = async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined))?.status;
  return { child, output: () => output, readyz };
}

async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode === null) await once(child, "exit");
  return child.exitCode;
}

describe("the process shell every process runs in", () => {
  it.each([
    { scenario: "crash", kind: "unhandled promise rejection", message: "a stray rejection" },
    { scenario: "throw", kind: "uncaught exception", message: "a stray throw" },
  ])("logs an $kind as fatal and exits non-zero, rather than dying silently", async ({ scenario, kind, message }) => {
    const running = await start(scenario);
    expect(await exitCode(running.child)).toBe(70);
    const fatal = running.output().split("\n").find((line) => line.includes('"level":60'));
    expect(fatal).toContain(kind);
    expect(fatal).toContain(message);
  }, 90_000);

  it("stops what started last first, on SIGTERM, and exits 0", async () => {
    const running = await start("stop-in-order");
    running.child.kill("SIGTERM");
    expect(await exitCode(running.child)).toBe(0);
    const stops = running.output().split("\n").filter((line) => line.startsWith("stopping: "));
    expect(stops).toEqual(["stopping: third registered", "stopping: second registered", "stopping: first registered"]);
  }, 90_000);

  it("is ready while every registered condition holds, and not once one fails", async () => {
    const running = await start("unready");
    try {
      await eventually(async () => (await running.readyz()) === 200, 30_000, 100);
      running.child.kill("SIGUSR2");
      await eventually(async () => (await running.readyz()) === 503, 30_000, 100);
    } finally {
      running.child.kill("SIGTERM");
      await exitCode(running.child);
    }
  }, 90_000);

  it("is not ready before start-up has finished, whatever conditions it registered on the way", async () => {
    const running = await start("slow-start");
    try {
      // Its condition holds and its health server answers, but start-up is not over.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await running.readyz()).toBe(503);
      running.child.kill("SIGUSR2");
      await eventually(async () => (await running.readyz()) === 200, 30_000, 100);
    } finally {
      running.child.kill("SIGTERM");
      await exitCode(running.child);
    }
  }, 90_000);
});
