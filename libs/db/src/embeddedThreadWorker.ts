/**
 * The script of the embedded database's thread (see ThreadedPGlite): it owns the one PGlite of
 * the process and runs what the request thread sends, one request at a time, in order. It
 * imports PGlite and a helper that imports nothing, so it loads the same from sources and from
 * the build.
 */
import { PGlite } from "@electric-sql/pglite";
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import { concatBytes } from "./concatBytes.js";
import type { ThreadOpened, ThreadOpenOptions, ThreadReply, ThreadRequest } from "./embeddedThreadMessages.js";

const port = parentPort!;

function describe(err: unknown): { message: string; name?: string; stack?: string } {
  return err instanceof Error ? { message: err.message, name: err.name, ...(err.stack ? { stack: err.stack } : {}) } : { message: String(err) };
}

async function answer(pglite: PGlite, request: ThreadRequest): Promise<ThreadReply> {
  switch (request.kind) {
    case "exec": {
      // Not execProtocolRaw: that one also parses the answer into a list of messages that only
      // execProtocol empties, so on a thread that is sent nothing else every row ever read was
      // kept (the heap grew by megabytes a second under reads), and parsed for nothing. The
      // pieces are copied as they come: PGlite hands out views of its own memory.
      const chunks: Uint8Array[] = [];
      await pglite.execProtocolRawStream(request.message, { syncToFs: request.syncToFs, onRawData: (data) => chunks.push(data.slice()) });
      return { id: request.id, answer: concatBytes(chunks), inTransaction: pglite.isInTransaction() };
    }
    case "syncToFs":
      await pglite.syncToFs();
      return { id: request.id, inTransaction: pglite.isInTransaction() };
    case "dump":
      return { id: request.id, dump: await pglite.dumpDataDir("none"), inTransaction: pglite.isInTransaction() };
    case "heapUsed":
      return { id: request.id, heapUsed: getHeapStatistics().used_heap_size, inTransaction: pglite.isInTransaction() };
    case "close":
      await pglite.close();
      return { id: request.id, inTransaction: false };
  }
}

let pglite: PGlite;
try {
  pglite = await PGlite.create(workerData as ThreadOpenOptions);
} catch (err) {
  port.postMessage({ opened: false, error: describe(err) } satisfies ThreadOpened);
  throw err;
}
port.postMessage({ opened: true } satisfies ThreadOpened);

// One at a time: the next request waits for the one before it, as calls on one PGlite would.
let previous: Promise<unknown> = Promise.resolve();
port.on("message", (request: ThreadRequest) => {
  previous = previous.then(async () => {
    let reply: ThreadReply;
    try {
      reply = await answer(pglite, request);
    } catch (err) {
      reply = { id: request.id, error: describe(err) };
    }
    // The answer is a fresh copy PGlite made: handed over, not copied again.
    port.postMessage(reply, "answer" in reply && reply.answer ? [reply.answer.buffer as ArrayBuffer] : []);
  });
});
