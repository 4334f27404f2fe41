import { buildOpenApiDocument } from "@sched/openapi";
import { ResponseValidator } from "@sched/openapi/response-validator";
import { startTestSystem, type TestSystem, type WiringKind } from "../harness.js";
import { rawRequest, type RawAnswer } from "../raw.js";
import { judge, type Problem } from "./judge.js";
import { RequestGenerator, type FuzzRequest } from "./requests.js";
import { serialize } from "./wire.js";
import { seedWorld, type FuzzWorld } from "./world.js";

/** Limits out of the way: the fuzz is about answers, not refusals. */
const NO_LIMITS = { standardPerMinute: 1_000_000, aiPerMinute: 1_000_000, authFailuresPerMinute: 1_000_000 };

/** Longer than any answer should take, even from a busy machine; a request with no answer by then is a hang. */
const ANSWER_TIMEOUT_MS = 15_000;

interface Judged {
  answer: RawAnswer | Error;
  problems: Problem[];
}

/** A running system with its seeded world, requests generated from its OpenAPI document, and a judge for their answers. */
export interface FuzzTarget {
  world: FuzzWorld;
  generator: RequestGenerator;
  send(request: FuzzRequest): Promise<Judged>;
  stop(): Promise<void>;
}

export async function startFuzzTarget(wiring: WiringKind): Promise<FuzzTarget> {
  const sys: TestSystem = await startTestSystem(wiring, NO_LIMITS);
  try {
    const document = buildOpenApiDocument();
    const world = await seedWorld(sys.url);
    const generator = new RequestGenerator(document, world);
    const validator = new ResponseValidator(document);
    return {
      world,
      generator,
      async send(request) {
        // The socket stays open for writing, as an ordinary client's does: Node's server drops a request whose client half-closes before the answer is ready.
        const answer = await rawRequest(sys.url, serialize(request), { timeoutMs: ANSWER_TIMEOUT_MS, keepOpen: true }).catch((err: Error) => err);
        return { answer, problems: judge(request, answer, { document, validator, world, caller: generator.principalOf(request) }) };
      },
      stop: () => sys.stop(),
    };
  } catch (err) {
    await sys.stop();
    throw err;
  }
}
