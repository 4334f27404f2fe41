/** The request header of api-decisions part 5, on every public POST. */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** 1 to 255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_FORMAT = /^[\x20-\x7E]{1,255}$/;
/** The answer header of a replayed response. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a key is remembered (api-decisions part 5). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A request's claim on its key expires this long after the request's
 * deadline, in the gateway and in the service alike: a request that died
 * mid-flight blocks a retry with the key no longer than that.
 */
export const IDEMPOTENCY_CLAIM_MARGIN_MS = 1_000;
/**
 * The bus header on which the gateway hands a POST's request fingerprint
 * (method, path, query and body, hashed once at the edge) to the service,
 * beside the Idempotency-Key: the service keeps it with its own record, so
 * both layers judge "the same request" alike.
 */
export const IDEMPOTENCY_FINGERPRINT_HEADER = "Sched-Idempotency-Fingerprint";
