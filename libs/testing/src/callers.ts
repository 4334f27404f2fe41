import type { Caller, ServedRequest } from "@sched/proto";

/**
 * A test-mode organizer who may read and write meetings, as the gateway would
 * hand it to a service; `tag` makes its user and key ids its own (padded to
 * the 24 characters of an id).
 */
export function meetingsCaller(tag: string): Caller {
  const id = tag.padEnd(24, "0").slice(0, 24);
  return { userId: `usr_${id}`, email: "organizer@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read", "meetings:write"], apiKeyId: `key_${id}` };
}

/** The `n`th request of a test-mode key as the gateway logs it (second `n` of 2026-11-26 07:00), with `fields` changed. */
export function servedRequest(n: number, fields: Partial<ServedRequest> = {}): ServedRequest {
  return {
    at: new Date(Date.UTC(2026, 10, 26, 7, 0, n)).toISOString(),
    requestId: `req_${n}`,
    apiKeyId: "key_log",
    userId: "usr_log",
    mode: "test",
    method: "GET",
    path: "/v1/meetings/:id",
    status: 200,
    durationMs: n,
    ...fields,
  };
}
