import { expect, it } from "vitest";
import { FOREGROUND_TURNS_PER_BACKGROUND, inBackground, SessionTurns } from "../src/embeddedSession.js";

const session = { name: "the one session" };

/** Takes a turn and records its name once it has the session; `done` hands the session on. */
function take(turns: SessionTurns<typeof session>, name: string, order: string[]): Promise<() => void> {
  return turns.acquire().promise.then((got) => {
    order.push(name);
    return () => void turns.release(got);
  });
}

it("hands the session to waiting requests before background work, yet to background work every fifth turn while requests keep coming", async () => {
  const turns = new SessionTurns(session, 10_000);
  const order: string[] = [];
  const first = await take(turns, "request 0", order);
  const background = [1, 2].map((n) => inBackground(() => take(turns, `background ${n}`, order)));
  const requests = Array.from({ length: FOREGROUND_TURNS_PER_BACKGROUND + 2 }, (_, i) => take(turns, `request ${i + 1}`, order));
  expect(turns.numPendingAcquires()).toBe(2 + FOREGROUND_TURNS_PER_BACKGROUND + 2);
  first();
  for (const turn of [...requests.slice(0, FOREGROUND_TURNS_PER_BACKGROUND), background[0]!, ...requests.slice(FOREGROUND_TURNS_PER_BACKGROUND), background[1]!]) (await turn)();
  expect(order).toEqual(["request 0", "request 1", "request 2", "request 3", "request 4", "background 1", "request 5", "request 6", "background 2"]);
  expect(turns.numUsed()).toBe(0);
  expect(turns.numFree()).toBe(1);
});

it("lets a turn wait no longer than its timeout, and gives the session to the next in line when the holder is done", async () => {
  const turns = new SessionTurns(session, 50);
  const release = await take(turns, "holder", []);
  await expect(turns.acquire().promise).rejects.toThrow("Timeout acquiring");
  const next = turns.acquire().promise;
  release();
  expect(await next).toBe(session);
  turns.release(session);
  await turns.destroy();
  await expect(turns.acquire().promise).rejects.toThrow("closed");
});
