import type { Caller } from "@sched/proto";

/**
 * A test-mode organizer who may read and write meetings, as the gateway would
 * hand it to a service; `tag` makes its user and key ids its own (padded to
 * the 24 characters of an id).
 */
export function meetingsCaller(tag: string): Caller {
  const id = tag.padEnd(24, "0").slice(0, 24);
  return { userId: `usr_${id}`, email: "organizer@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read", "meetings:write"], apiKeyId: `key_${id}` };
}
