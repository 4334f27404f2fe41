import { PGlite, protocol, type PGliteInterface, type PGliteOptions } from "@electric-sql/pglite";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { EventLoopUtilization } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { BackendMessage, DatabaseError } from "./embeddedStatements.js";
import type { ThreadCall, ThreadOpened, ThreadOpenOptions, ThreadReply, ThreadRequest } from "./embeddedThreadMessages.js";

/** What PGlite's query, exec and transaction are built on (its BasePGlite), implemented here by calls to the thread. */
type SessionBase = Pick<PGliteInterface, "query" | "exec" | "transaction" | "runExclusive" | "serializers" | "parsers" | "describeQuery"> & {
  _initArrayTypes(): Promise<void>;
};
// PGlite's abstract base is not exported by itself; it is PGlite's parent class.
const SessionBase = Object.getPrototypeOf(PGlite) as abstract new () => SessionBase;

/** One at a time, in order: PGlite's query and transaction locks. */
class Lock {
  private last: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const done = this.last.then(work);
    this.last = done.catch(() => undefined);
    return done;
  }
}

/**
 * The thread, started on the script beside this file: built, as it is; from sources (npm start,
 * tests, benchmarks), through tsx's loader, which Node 20 hands to no worker, registered first.
 */
function startThread(options: ThreadOpenOptions): Worker {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./embeddedThreadWorker.js", import.meta.url), { workerData: options });
  const script = new URL("./embeddedThreadWorker.ts", import.meta.url).href;
  const loader = import.meta.resolve("tsx/esm/api");
  const source = `import(${JSON.stringify(loader)}).then(({ register }) => { register(); return import(${JSON.stringify(script)}); });`;
  return new Worker(source, { eval: true, workerData: options });
}

/**
 * PGlite's Postgres compiled and its file bundle read once per process, and handed to each
 * thread (a compiled module crosses to a worker as it is): each thread would otherwise
 * compile its 9 MB of WebAssembly again for every database it opens (tests open many).
 */
let artifacts: Promise<PGliteArtifacts> | undefined;

type PGliteArtifacts = Required<Pick<PGliteOptions, "pgliteWasmModule" | "fsBundle">>;
/** The global WebAssembly, which Node's types leave out. */
const { WebAssembly } = globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<PGliteArtifacts["pgliteWasmModule"]> } };

function pgliteArtifacts(): Promise<PGliteArtifacts> {
  artifacts ??= (async () => {
    const dist = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
    const [wasm, bundle] = await Promise.all([readFile(join(dist, "pglite.wasm")), readFile(join(dist, "pglite.data"))]);
    return { pgliteWasmModule: await WebAssembly.compile(wasm), fsBundle: new Blob([bundle]) };
  })();
  return artifacts;
}

interface ExecOptions {
  syncToFs?: boolean;
  throwOnError?: boolean;
}

interface Pending {
  resolve: (reply: ThreadReply & { inTransaction: boolean }) => void;
  reject: (err: Error) => void;
}

/**
 * The embedded Postgres on a thread of its own: a PGlite that runs in a worker thread, taking
 * wire-protocol messages and giving back Postgres's answers. The statements' work (parsing,
 * planning, executing, writing pages) is done on the second core, and the request thread is
 * free meanwhile for the requests that do not wait on the database; the answers are read here,
 * as PGlite reads them. It has PGlite's interface (query, exec, transaction, execProtocol…), so
 * knex's PGlite client and the kept statements use it as they would a PGlite.
 */
export class ThreadedPGlite extends SessionBase {
  readonly debug = 0;
  readonly waitReady = Promise.resolve();
  private readonly queryLock = new Lock();
  private readonly transactionLock = new Lock();
  private readonly pending = new Map<number, Pending>();
  private lastId = 0;
  /** As the session was after the last call: whether it is in a transaction block. */
  private inTransaction = false;
  /** Why calls fail from now on, once closed or the thread stopped. */
  private closedBecause: Error | undefined;

  private constructor(private readonly worker: Worker) {
    super();
    worker.on("message", (reply: ThreadReply) => this.answered(reply));
    worker.on("error", (err) => this.stopped(err));
    worker.on("exit", (code) => this.stopped(new Error(`the embedded database's thread exited (${code})`)));
  }

  /** A PGlite opened with `options` on a thread of its own. */
  static async open(options: ThreadOpenOptions): Promise<ThreadedPGlite> {
    const worker = startThread({ ...options, ...(await pgliteArtifacts()) });
    const opened = await new Promise<ThreadOpened>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the embedded database's thread exited (${code}) before it opened the database`)));
    });
    if (!opened.opened) {
      await worker.terminate();
      throw Object.assign(new Error(opened.error.message), { stack: opened.error.stack });
    }
    const pglite = new ThreadedPGlite(worker);
    worker.unref();
    // As PGlite does once started: the array types' serializers and parsers, read from the database.
    await pglite._initArrayTypes();
    return pglite;
  }

  get closed(): boolean {
    return this.closedBecause !== undefined;
  }

  isInTransaction(): boolean {
    return this.inTransaction;
  }

  async execProtocolRaw(message: Uint8Array, { syncToFs = true }: { syncToFs?: boolean } = {}): Promise<Uint8Array> {
    const reply = await this.call({ kind: "exec", message: ownBuffer(message), syncToFs });
    return "answer" in reply && reply.answer ? reply.answer : new Uint8Array(0);
  }

  /** As PGlite's: the answer's messages. */
  async execProtocolStream(message: Uint8Array, options: ExecOptions = {}): Promise<BackendMessage[]> {
    return (await this.execProtocol(message, options)).messages;
  }

  /** As PGlite's: the answer, and its messages up to the first error, which is thrown unless `throwOnError` is false. */
  async execProtocol(message: Uint8Array, { syncToFs = true, throwOnError = true }: ExecOptions = {}): Promise<{ messages: BackendMessage[]; data: Uint8Array }> {
    const data = await this.execProtocolRaw(message, { syncToFs });
    const messages: BackendMessage[] = [];
    let error: DatabaseError | undefined;
    new protocol.Parser().parse(data, (received) => {
      if (error) return;
      if (throwOnError && received instanceof protocol.messages.DatabaseError) error = received;
      messages.push(received);
    });
    if (error) throw error;
    return { messages, data };
  }

  async syncToFs(): Promise<void> {
    await this.call({ kind: "syncToFs" });
  }

  /** The database's whole folder, as a tarball PGlite's loadDataDir takes. */
  async dumpDataDir(): Promise<Blob> {
    const reply = await this.call({ kind: "dump" });
    return "dump" in reply && reply.dump ? reply.dump : new Blob([]);
  }

  /** How busy the thread has been, as performance.eventLoopUtilization tells it: since it started, or since `before`. */
  threadUtilization(before?: EventLoopUtilization): EventLoopUtilization {
    return this.worker.performance.eventLoopUtilization(before);
  }

  /** The bytes the thread's JavaScript heap holds now (the database itself is not in it). */
  async threadHeapUsed(): Promise<number> {
    const reply = await this.call({ kind: "heapUsed" });
    return "heapUsed" in reply && reply.heapUsed !== undefined ? reply.heapUsed : 0;
  }

  /** Closes the database and ends its thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.call({ kind: "close" });
    } finally {
      this.closedBecause = new Error("PGlite is closed");
      await this.worker.terminate();
    }
  }

  async _checkReady(): Promise<void> {
    if (this.closedBecause) throw this.closedBecause;
  }

  _runExclusiveQuery<T>(work: () => Promise<T>): Promise<T> {
    return this.queryLock.run(work);
  }

  _runExclusiveTransaction<T>(work: () => Promise<T>): Promise<T> {
    return this.transactionLock.run(work);
  }

  // COPY's files and LISTEN are not used on the embedded database.
  async _handleBlob(blob?: Blob): Promise<void> {
    if (blob) throw new Error("the embedded database takes no files");
  }

  async _getWrittenBlob(): Promise<undefined> {
    return undefined;
  }

  async _cleanupBlob(): Promise<void> {}

  listen(): Promise<never> {
    return Promise.reject(new Error("the embedded database has no LISTEN"));
  }

  private call(request: ThreadCall): Promise<ThreadReply & { inTransaction: boolean }> {
    if (this.closedBecause) return Promise.reject(this.closedBecause);
    const id = ++this.lastId;
    return new Promise((resolve, reject) => {
      // The process stays up while the database has work in hand; idle, the thread keeps nobody waiting.
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      const transfer = request.kind === "exec" ? [request.message.buffer as ArrayBuffer] : [];
      this.worker.postMessage({ ...request, id } as ThreadRequest, transfer);
    });
  }

  private answered(reply: ThreadReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if ("error" in reply) {
      pending.reject(Object.assign(new Error(reply.error.message), reply.error));
      return;
    }
    this.inTransaction = reply.inTransaction;
    pending.resolve(reply);
  }

  /** The thread ended or failed: what it had in hand fails as a closed database does (unavailable, not a bug). */
  private stopped(cause: Error): void {
    this.closedBecause ??= Object.assign(new Error("PGlite is closed"), { cause });
    for (const { reject } of this.pending.values()) reject(this.closedBecause);
    this.pending.clear();
  }
}

/**
 * A copy of `message` on a buffer of its own, handed to the thread: the caller's may be a
 * serializer's buffer it writes again (handed over, it would be gone), or a slice of a larger
 * one (cloned, all of it would be copied).
 */
function ownBuffer(message: Uint8Array): Uint8Array {
  return message.slice();
}
