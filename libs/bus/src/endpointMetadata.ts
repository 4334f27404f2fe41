import { type Endpoint, isRedirect } from "@sched/proto";

/**
 * What `nats micro info` shows beside a served endpoint: the kind its
 * contract declares, and for a public route the success statuses it
 * answers with, each with `+body` when the answer carries one and
 * `+location` when it sends the client on.
 */
export function endpointMetadata(endpoint: Endpoint): Record<string, string> {
  if (endpoint.kind !== "route") return { kind: endpoint.kind };
  const replies = Object.entries(endpoint.replies).map(([status, body]) => (body === null ? status : isRedirect(body) ? `${status}+location` : `${status}+body`));
  return { kind: endpoint.kind, replies: replies.join(",") };
}
