import { errorDocUrl, type ErrorCode } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/index.js";
import { ResponseValidator } from "../src/responseValidator.js";

const validator = new ResponseValidator(buildOpenApiDocument());

const counted = {
  "X-Request-Id": "req_1",
  "X-RateLimit-Limit": "100",
  "X-RateLimit-Remaining": "99",
  "X-RateLimit-Reset": "1893456060",
  "Content-Type": "application/json; charset=utf-8",
};
const contact = { id: "ctc_1", email: "bo@example.com", name: null, relationship: "other", blocked: false, addedAt: "2030-01-01T00:00:00Z" };
const error = (code: ErrorCode) => ({ error: { code, message: "m", requestId: "req_1", docUrl: errorDocUrl(code) } });
const check = (method: string, path: string, status: number, headers: Record<string, string>, body?: unknown) =>
  validator.check(method, path, { status, headers: new Headers(headers), body });

describe("response validation against the document", () => {
  it("when a response is as documented, then there is nothing to say", () => {
    expect(check("GET", "/v1/contacts/ctc_1", 200, counted, contact)).toEqual([]);
    expect(check("GET", "/v1/contacts?includeBlocked=true", 200, counted, { data: [contact] })).toEqual([]);
    expect(check("DELETE", "/v1/contacts/ctc_1", 204, counted)).toEqual([]);
    expect(check("PATCH", "/v1/meetings/mtg_1", 400, counted, error("meeting_ended"))).toEqual([]);
    expect(check("GET", "/v1/me", 401, { "X-Request-Id": "req_1", "Content-Type": "application/json" }, error("unauthorized"))).toEqual([]);
  });

  it("when the status is not listed for the operation, then it fails", () => {
    expect(check("GET", "/v1/contacts/ctc_1", 418, counted, contact)).toEqual([expect.stringMatching(/status 418 is not documented/)]);
    expect(check("GET", "/v1/contacts", 201, counted, { data: [] })).toEqual([expect.stringMatching(/status 201 is not documented/)]);
  });

  it("when the body has a field the schema does not name, or a wrong type, then it fails", () => {
    expect(check("GET", "/v1/contacts/ctc_1", 200, counted, { ...contact, nickname: "B" })).toEqual([expect.stringMatching(/additional properties/)]);
    expect(check("GET", "/v1/contacts/ctc_1", 200, counted, { ...contact, blocked: "no" })).toEqual([expect.stringMatching(/blocked must be boolean/)]);
    expect(check("GET", "/v1/contacts", 200, counted, { data: [], hasMore: false })).toEqual([expect.stringMatching(/additional properties/)]);
  });

  it("when an error carries a code the status does not list for the operation, then it fails", () => {
    expect(check("GET", "/v1/contacts/ctc_1", 404, counted, error("user_exists"))).toHaveLength(1);
    expect(check("POST", "/v1/contacts", 409, counted, error("user_exists"))).toHaveLength(1);
    expect(check("POST", "/v1/contacts", 409, counted, error("contact_exists"))).toEqual([]);
  });

  it("when an error lacks the docUrl of its own code, then it fails; under a public base URL it passes", () => {
    const { docUrl: _d, ...withoutDocUrl } = error("not_found").error;
    expect(check("GET", "/v1/contacts/ctc_1", 404, counted, { error: withoutDocUrl })).toHaveLength(1);
    expect(check("GET", "/v1/contacts/ctc_1", 404, counted, { error: { ...error("not_found").error, docUrl: errorDocUrl("forbidden") } })).toHaveLength(1);
    expect(check("GET", "/v1/contacts/ctc_1", 404, counted, { error: { ...error("not_found").error, docUrl: errorDocUrl("not_found", "https://api.example.com") } })).toEqual([]);
  });

  it("when a required header is missing or malformed, then it fails", () => {
    const { "X-RateLimit-Remaining": _r, ...withoutRemaining } = counted;
    expect(check("GET", "/v1/contacts/ctc_1", 200, withoutRemaining, contact)).toEqual([expect.stringMatching(/X-RateLimit-Remaining is missing/)]);
    expect(check("GET", "/v1/contacts/ctc_1", 200, { ...counted, "X-RateLimit-Limit": "many" }, contact)).toEqual([expect.stringMatching(/X-RateLimit-Limit/)]);
    expect(check("GET", "/v1/contacts", 429, counted, error("rate_limited"))).toEqual([expect.stringMatching(/Retry-After is missing/)]);
    expect(check("GET", "/v1/contacts", 503, { "X-Request-Id": "r", "Retry-After": "1", "Content-Type": "application/json" }, error("service_unavailable"))).toEqual([]);
  });

  it("when the content type or the presence of a body is wrong, then it fails", () => {
    expect(check("GET", "/v1/contacts/ctc_1", 200, { ...counted, "Content-Type": "text/html" }, contact)).toEqual([expect.stringMatching(/Content-Type/)]);
    expect(check("DELETE", "/v1/contacts/ctc_1", 204, counted, {})).toEqual([expect.stringMatching(/body was sent/)]);
    expect(check("HEAD", "/v1/contacts/ctc_1", 200, counted)).toEqual([]);
  });

  it("when no operation takes the request, then it must be 404, 405 with the documented methods, or 403 for a preflight", () => {
    const plain = { "X-Request-Id": "r", "Content-Type": "application/json" };
    expect(check("GET", "/v1/nope", 404, plain, error("not_found"))).toEqual([]);
    expect(check("GET", "/v1/nope", 200, plain, {})).not.toEqual([]);
    expect(check("PUT", "/v1/contacts", 405, { ...plain, Allow: "GET, POST" }, error("method_not_allowed"))).toEqual([]);
    expect(check("PUT", "/v1/contacts", 405, { ...plain, Allow: "GET" }, error("method_not_allowed"))).toEqual([expect.stringMatching(/Allow/)]);
    expect(check("OPTIONS", "/v1/contacts", 403, plain, error("forbidden"))).toEqual([]);
    expect(check("OPTIONS", "/v1/contacts", 204, plain)).not.toEqual([]);
  });
});
