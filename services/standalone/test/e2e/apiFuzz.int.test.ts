import fc from "fast-check";
import { describe, it } from "vitest";
import { perSuite, WIRINGS } from "../harness.js";
import type { FuzzRequest } from "../fuzz/requests.js";
import { describeRequest } from "../fuzz/wire.js";
import { startFuzzTarget, type FuzzTarget } from "../fuzz/target.js";

/** The seed every run uses first, so a failure it finds is found again; `npm run fuzz` runs the long campaigns. */
const FIXED_SEED = 20_261_125;
const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
/** Each property stops generating after this long on a slow machine (what it sent by then still counts); shrinking a failure is included. */
const TIME_LIMIT_MS = 15_000;

/**
 * Requests a property run sends and judges. A failure says what was wrong,
 * the request, and how to replay it: `FUZZ_SEED=… FUZZ_PATH=… npx vitest run
 * services/standalone/test/e2e/apiFuzz.int.test.ts`.
 */
async function fuzz(target: FuzzTarget, seed: number): Promise<void> {
  const replayPath = process.env.FUZZ_PATH;
  const details = await fc.check(
    fc.asyncProperty(target.generator.request(), async (request) => {
      const { problems } = await target.send(request);
      if (problems.length > 0) throw new Error(problems.map((p) => `${p.kind}: ${p.detail}`).join("\n"));
    }),
    { seed, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, ...(replayPath ? { path: replayPath } : {}) },
  );
  if (!details.failed) return;
  const request = details.counterexample?.[0] as FuzzRequest | undefined;
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(
    `${cause}\nrequest: ${request ? describeRequest(request) : "?"}\n` +
      `replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} npx vitest run services/standalone/test/e2e/apiFuzz.int.test.ts`,
  );
}

describe.each(WIRINGS)("the whole API under requests generated from its OpenAPI document (%s)", async (wiring) => {
  let target: FuzzTarget;
  const { available } = await perSuite(wiring, async () => (target = await startFuzzTarget(wiring)));

  it.runIf(available)("never answers 5xx (but a deliberate 503), always with the envelope, an X-Request-Id and as documented, and shows nobody another's data: fixed seed", async () => {
    await fuzz(target, Number(process.env.FUZZ_SEED ?? FIXED_SEED));
  }, 60_000);

  it.runIf(available && !process.env.FUZZ_SEED)("the same, with a fresh seed each run", async () => {
    await fuzz(target, Math.floor(Math.random() * 2 ** 31));
  }, 60_000);
});
