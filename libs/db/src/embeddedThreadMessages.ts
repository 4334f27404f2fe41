import type { PGliteOptions } from "@electric-sql/pglite";

/**
 * What the request thread and the embedded database's thread (embeddedThreadWorker.ts) say to
 * each other over the worker's port. Types only: the worker's script loads nothing but PGlite.
 */

/** How the thread opens its PGlite: those of PGlite's own options that structured clone carries (loadDataDir: a tarball). */
export type ThreadOpenOptions = Pick<PGliteOptions, "dataDir" | "initDbStartParams" | "postgresqlconf" | "loadDataDir" | "pgliteWasmModule" | "fsBundle">;

export type ThreadRequest =
  /** Wire-protocol messages, answered by Postgres's raw answer; `syncToFs` as PGlite's execProtocolRaw. */
  | { id: number; kind: "exec"; message: Uint8Array; syncToFs: boolean }
  | { id: number; kind: "syncToFs" }
  | { id: number; kind: "dump" }
  | { id: number; kind: "close" };

export type ThreadReply =
  /** `answer` for exec; `inTransaction` as the session is after it (PGlite's isInTransaction). */
  | { id: number; answer?: Uint8Array; dump?: Blob; inTransaction: boolean }
  | { id: number; error: { message: string; name?: string; stack?: string } };

/** The thread's first message: its PGlite is open, or could not be. */
export type ThreadOpened = { opened: true } | { opened: false; error: { message: string; stack?: string } };
