import type { Caller, RateBucket } from "@sched/proto";

/** The deployment's requests-a-minute limits, which a key's own limits override. */
export interface DefaultLimits {
  standardPerMinute: number;
  aiPerMinute: number;
}

/** The limit that applies to this caller in this bucket: its key's own, else the deployment's. */
export function limitFor(bucket: RateBucket, caller: Pick<Caller, "rateLimits">, defaults: DefaultLimits): number {
  const own = bucket === "ai" ? caller.rateLimits?.aiPerMinute : caller.rateLimits?.standardPerMinute;
  return own ?? (bucket === "ai" ? defaults.aiPerMinute : defaults.standardPerMinute);
}
