/** How long a connection (or the embedded database's session) may be waited for outside a request (migrations, event consumers, timers). */
export const ACQUIRE_TIMEOUT_MS = 5_000;
