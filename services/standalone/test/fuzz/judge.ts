import type { OpenApiDocument } from "@sched/openapi";
import type { ResponseValidator } from "@sched/openapi/response-validator";
import { errorDocUrl, isErrorCode } from "@sched/proto";
import type { RawAnswer } from "../raw.js";
import type { FuzzRequest } from "./requests.js";
import { shorten } from "./wire.js";
import { maySee, type FuzzWorld, type Principal } from "./world.js";

/** One thing wrong with an answer; `kind` groups the failures of one class. */
export interface Problem {
  kind: "no-answer" | "server-error" | "request-id" | "envelope" | "leak" | "undocumented" | "other-users-data" | "number-out-of-range";
  detail: string;
}

/** Errors say nothing of the inside: stack frames, file names, SQL, bus subjects or backing servers. */
const INSIDE = /\bat \S+ \(|node_modules|\.[jt]s:\d|\bselect\b.+\bfrom\b|\binsert into\b|(accounts|contacts|meetings|availability|ai-ranking|invites)\.v1\.|ECONNREFUSED|knex|pglite/i;

/** Answers Node's own HTTP parser gives before the API sees the request; the document describes the API's answers, not these. */
const EDGE_REFUSALS = new Set([400, 408, 413, 414, 431]);

/** Paths outside the API, which the document does not describe: the index of where things are, probes and the HTML reference page. */
const OUTSIDE_THE_API = /^\/$|^\/(healthz|readyz|livez|metrics|docs)(\/|$)/;

/**
 * Everything wrong with the answer to a request: any 5xx but a deliberate 503,
 * an error without the envelope, a missing X-Request-Id, internals in an
 * error, an answer the OpenAPI document does not describe, or a success that
 * shows the caller an object of another user or of the other mode.
 */
export function judge(
  request: FuzzRequest,
  answer: RawAnswer | Error,
  context: { document: OpenApiDocument; validator: ResponseValidator; world: FuzzWorld; caller: Principal | undefined; publicBaseUrl?: string },
): Problem[] {
  if (answer instanceof Error) return [{ kind: "no-answer", detail: answer.message }];
  const problems: Problem[] = [];
  const { status, headers, text } = answer;
  // A plain-text answer (Graph's handshake echoed) is its text, as the document describes it: a string.
  const body: RawAnswer["body"] = String(headers["content-type"]).startsWith("text/plain") ? text : answer.body;
  const requestId = headers["x-request-id"];
  if (!requestId) problems.push({ kind: "request-id", detail: "no X-Request-Id" });
  if (status >= 500 && !(status === 503 && body?.error?.code === "service_unavailable" && headers["retry-after"])) {
    problems.push({ kind: "server-error", detail: `${status} ${text.slice(0, 300)}` });
  }
  if (status < 200 || status > 599) problems.push({ kind: "server-error", detail: `status ${status}` });
  if (status >= 400 && request.method !== "HEAD") {
    const error = body?.error;
    const envelope = String(headers["content-type"]).startsWith("application/json") && isEnvelope(body, requestId, context.publicBaseUrl);
    if (!envelope) problems.push({ kind: "envelope", detail: `${status} ${headers["content-type"]} ${text.slice(0, 300)}` });
    // The request id is random letters and may spell anything (`req_…KNEX…`); the rest of the answer may not.
    const said = envelope ? `${error.message} ${error.param ?? ""} ${error.code}` : text;
    if (INSIDE.test(said)) problems.push({ kind: "leak", detail: text.slice(0, 300) });
  }
  const path = pathOf(request.target);
  // A path two templates match (`/v1/calendar-connections/google` is also a connection id) has the methods of both; the validator knows only the first.
  if (path !== undefined && !request.malformed && !OUTSIDE_THE_API.test(path) && templatesMatching(context.document, path) <= 1 && !(request.operation === undefined && EDGE_REFUSALS.has(status))) {
    if (text !== "" && body === undefined) problems.push({ kind: "undocumented", detail: `${status} with a body that is not JSON: ${text.slice(0, 200)}` });
    else {
      for (const detail of context.validator.check(request.method, request.target, { status, headers: new Headers(headers), body })) {
        // A HEAD answer has no body, so no envelope either, whatever its status.
        if (request.method === "HEAD" && / body is not the \w+ error envelope/.test(detail)) continue;
        problems.push({ kind: "undocumented", detail: shorten(detail, 600) });
      }
    }
  }
  if (status >= 200 && status < 300 && context.caller && path !== "/v1/openapi.json") problems.push(...othersData(request, body, context.world, context.caller));
  const outOfRange =
    status >= 200 && status < 300 && request.body && path !== undefined && readsBody(context.document, request.method, path) ? infiniteNumber(request.body.toString("utf8")) : undefined;
  if (outOfRange) problems.push({ kind: "number-out-of-range", detail: `${status}: a number of the body is past any double (JSON.parse reads it as ${outOfRange}), yet it was taken` });
  return problems;
}

const ENVELOPE_FIELDS = new Set(["code", "message", "param", "requestId", "docUrl"]);

/**
 * The error envelope and nothing else: a known code, a message, the answer's
 * request id, the reference's section on the code, a param only as text.
 */
function isEnvelope(body: unknown, requestId: string | undefined, publicBaseUrl: string | undefined): boolean {
  if (typeof body !== "object" || body === null || Object.keys(body).length !== 1) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return false;
  const { code, message, param, docUrl } = error as Record<string, unknown>;
  return (
    Object.keys(error).every((field) => ENVELOPE_FIELDS.has(field)) &&
    typeof code === "string" &&
    isErrorCode(code) &&
    typeof message === "string" &&
    (error as { requestId?: unknown }).requestId === requestId &&
    (param === undefined || typeof param === "string") &&
    docUrl === errorDocUrl(code, publicBaseUrl)
  );
}

/**
 * A success naming an object the caller may not see: in the path it asked for
 * (another user's resource must be 404), or as an `id` anywhere in the body.
 * Objects of the caller's that first appear here are recorded as theirs.
 */
function othersData(request: FuzzRequest, body: unknown, world: FuzzWorld, caller: Principal): Problem[] {
  const problems: Problem[] = [];
  const path = request.target.split("?")[0]!;
  for (const segment of path.split("/")) {
    const id = safeDecode(segment);
    const owner = world.owners.get(id);
    if (owner && !maySee(caller, owner, id)) problems.push({ kind: "other-users-data", detail: `${request.method} ${path} as ${caller.user}/${caller.mode} succeeded on ${owner.user}/${owner.mode}'s ${segment}` });
  }
  const query = new URLSearchParams(request.target.split("?")[1] ?? "");
  if (path === "/v1/availability" && query.getAll("email").some((e) => e.trim().toLowerCase() === world.emails.b)) {
    problems.push({ kind: "other-users-data", detail: `${world.emails.b} never made the caller a contact, yet their day was shown` });
  }
  for (const id of ids(body)) {
    const owner = world.owners.get(id);
    if (!owner) {
      if (/^(mtg|ctc|cal|key)_/.test(id) && request.operation?.startsWith("POST ")) world.owners.set(id, caller);
    } else if (!maySee(caller, owner, id)) problems.push({ kind: "other-users-data", detail: `the answer names ${owner.user}/${owner.mode}'s ${id}` });
  }
  return problems;
}

/** Every `id` field in a JSON value. */
function ids(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) ids(v, found);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "id" && typeof v === "string") found.push(v);
      else ids(v, found);
    }
  }
  return found;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The path of a request target as the document's validator reads it; none for a target no URL parser takes (such as `//%00/`). */
function pathOf(target: string): string | undefined {
  try {
    return new URL(target, "http://localhost").pathname;
  } catch {
    return undefined;
  }
}

/** How many of the document's path templates a concrete path matches. */
function templatesMatching(document: OpenApiDocument, path: string): number {
  return matchingTemplates(document, path).length;
}

function matchingTemplates(document: OpenApiDocument, path: string): string[] {
  const segments = path.replace(/(.)\/$/, "$1").split("/");
  return Object.keys(document.paths ?? {}).filter((template) => {
    const parts = template.split("/");
    return parts.length === segments.length && parts.every((p, i) => (p.startsWith("{") ? segments[i] !== "" : p === segments[i]));
  });
}

/**
 * Whether the operation a request reaches reads a body at all: the gateway
 * never reads one for the others (a HEAD is its GET), so nothing in it can
 * have been taken.
 */
function readsBody(document: OpenApiDocument, method: string, path: string): boolean {
  const asked = (method === "HEAD" ? "get" : method.toLowerCase()) as "get";
  return matchingTemplates(document, path).some((template) => document.paths?.[template]?.[asked]?.requestBody !== undefined);
}

/**
 * The first number past any double (`1e309`, which JSON.parse reads as
 * Infinity and which re-encodes as `null`) that is still in the parsed body:
 * one a repeated key replaced does not count.
 */
function infiniteNumber(text: string): string | undefined {
  let found: string | undefined;
  try {
    JSON.parse(text, (_key, value: unknown) => {
      if (typeof value === "number" && !Number.isFinite(value)) found ??= String(value);
      return value;
    });
  } catch {
    return undefined;
  }
  return found;
}
