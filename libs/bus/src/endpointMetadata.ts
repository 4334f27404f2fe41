import type { Endpoint } from "@sched/proto";

/**
 * What `nats micro info` shows beside a served endpoint: the kind its
 * contract declares, and for a public route the success statuses it
 * answers with, each with `+body` when the answer carries one.
 */
export function endpointMetadata(endpoint: Endpoint): Record<string, string> {
  if (endpoint.kind !== "route") return { kind: endpoint.kind };
  const replies = Object.entries(endpoint.replies).map(([status, body]) => (body === null ? status : `${status}+body`));
  return { kind: endpoint.kind, replies: replies.join(",") };
}
