import type { PGliteOptions } from "@electric-sql/pglite";

/**
 * What the request thread and the embedded database's thread (embeddedThreadWorker.ts) say to
 * each other over the worker's port. Types only: the worker's script loads PGlite and nothing that
 * loads more (concatBytes).
 */

/** How the thread opens its PGlite: those of PGlite's own options that structured clone carries (loadDataDir: a tarball). */
export type ThreadOpenOptions = Pick<PGliteOptions, "dataDir" | "initDbStartParams" | "postgresqlconf" | "loadDataDir" | "pgliteWasmModule" | "fsBundle">;

/** What the thread is asked to do. */
export type ThreadCall =
  /** Wire-protocol messages, answered by Postgres's raw answer; `syncToFs` as PGlite's execProtocolRaw. */
  | { kind: "exec"; message: Uint8Array; syncToFs: boolean }
  | { kind: "syncToFs" }
  | { kind: "dump" }
  /** How many bytes the thread's JavaScript heap holds (V8's used_heap_size). */
  | { kind: "heapUsed" }
  | { kind: "close" };

/** A call as sent: its answer comes back under the same id. */
export type ThreadRequest = ThreadCall & { id: number };

export type ThreadReply =
  /** `answer` for exec; `inTransaction` as the session is after it (PGlite's isInTransaction). */
  | { id: number; answer?: Uint8Array; dump?: Blob; heapUsed?: number; inTransaction: boolean }
  | { id: number; error: { message: string; name?: string; stack?: string } };

/** The thread's first message: its PGlite is open, or could not be. */
export type ThreadOpened = { opened: true } | { opened: false; error: { message: string; stack?: string } };
