/**
 * Whether an error means a backing store is down, restarting or full rather
 * than that the request or the code is wrong: the request may well succeed
 * in a moment, so the client gets 503 with Retry-After, not 500. Judged by
 * the shapes pg, knex and PGlite give such errors (SQLSTATE codes, socket
 * error codes, the error's name, and the few messages pg gives without a
 * code), here and in the errors it wraps.
 */
export function isBackingServiceUnavailable(err: unknown): boolean {
  return unavailableIn(err, 0);
}

/** SQLSTATEs of a server that is shutting down, starting up or out of connection slots. */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01", // admin_shutdown: the connection was terminated (a restart, pg_terminate_backend)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: the database system is starting up or shutting down
  "53300", // too_many_connections
  "25P03", // idle_in_transaction_session_timeout: the session's transaction was left open too long
]);
/**
 * query_canceled, when the server gave up waiting: the session's statement_timeout
 * ran out (a lock held elsewhere, a database too busy). A statement cancelled on
 * purpose (pg_cancel_backend) has the same code and stays a failure of its own.
 */
const STATEMENT_TIMEOUT = { code: "57014", message: /statement timeout/ };
/** Class 08: connection exceptions. */
const CONNECTION_EXCEPTION_CLASS = "08";

/** Socket errors of a server that cannot be reached. */
const NETWORK_ERROR_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/** knex's pool could not hand out a connection in time. */
const POOL_TIMEOUT_NAME = "KnexTimeoutError";

/** What pg and PGlite say, without a code, of a connection that is gone or never came. */
const LOST_CONNECTION_MESSAGES = [
  /^Connection terminated/, // pg: the server closed the socket (also "… due to connection timeout")
  /Connection ended unexpectedly/,
  /is not queryable/, // pg: a client used after its connection failed
  /^timeout expired$/, // pg: connectionTimeoutMillis passed
  /^PGlite is closed$/,
  /^Unable to acquire a connection$/, // knex: the pool was destroyed (the process is shutting down)
];

function unavailableIn(err: unknown, depth: number): boolean {
  if (typeof err !== "object" || err === null || depth > 3) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === "string") {
    if (UNAVAILABLE_SQLSTATES.has(e.code) || NETWORK_ERROR_CODES.has(e.code)) return true;
    if (e.code === STATEMENT_TIMEOUT.code && typeof e.message === "string" && STATEMENT_TIMEOUT.message.test(e.message)) return true;
    if (e.code.length === 5 && e.code.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
  }
  if (e.name === POOL_TIMEOUT_NAME) return true;
  if (typeof e.message === "string" && LOST_CONNECTION_MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => unavailableIn(inner, depth + 1))) return true;
  return unavailableIn(e.cause, depth + 1);
}
