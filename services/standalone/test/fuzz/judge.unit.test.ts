import { buildOpenApiDocument } from "@sched/openapi";
import { ResponseValidator } from "@sched/openapi/response-validator";
import { errorDocUrl, type ErrorCode } from "@sched/proto";
import { describe, expect, it } from "vitest";
import type { RawAnswer } from "../raw.js";
import { judge } from "./judge.js";
import type { FuzzRequest } from "./requests.js";
import type { FuzzWorld, Principal } from "./world.js";

const document = buildOpenApiDocument();
const validator = new ResponseValidator(document);
const A_MEETING = "mtg_aaaaaaaaaaaaaaaaaaaaaaaa";
const A_LIVE_MEETING = "mtg_llllllllllllllllllllllll";
const B_MEETING = "mtg_bbbbbbbbbbbbbbbbbbbbbbbb";
const world = (): FuzzWorld => ({
  url: "http://localhost",
  keys: { aTest: "sk_test_a", aLive: "sk_live_a", aReadOnly: "sk_test_r", revoked: "sk_test_x", admin: "adm" },
  ids: { mtg: [A_MEETING, A_LIVE_MEETING, B_MEETING] },
  adminIds: {},
  emails: { a: "a@example.com", b: "b@example.com", contact: "c@example.com" },
  owners: new Map<string, Principal>([
    [A_MEETING, { user: "a", mode: "test" }],
    [A_LIVE_MEETING, { user: "a", mode: "live" }],
    [B_MEETING, { user: "b", mode: "test" }],
  ]),
});
const aTest: Principal = { user: "a", mode: "test" };

const request = (method: string, target: string, body?: string): FuzzRequest => ({
  method,
  target,
  headers: [["Host", "localhost"]],
  ...(body === undefined ? {} : { body: Buffer.from(body) }),
  chunked: false,
  operation: `${method} ${target.replace(/mtg_\w+/, "{id}").split("?")[0]}`,
  malformed: false,
});

const RATE = { "x-ratelimit-limit": "100", "x-ratelimit-remaining": "99", "x-ratelimit-reset": "1893456060" };
function answer(status: number, body: unknown, headers: Record<string, string> = {}): RawAnswer {
  const text = body === undefined ? "" : JSON.stringify(body);
  return { status, headers: { "x-request-id": "req_1", "content-type": "application/json; charset=utf-8", ...RATE, ...headers }, body, text };
}
const meeting = (id: string) => ({ id, title: "t", description: "", startTime: "2030-01-01T10:00:00Z", duration: "30 mins", participants: ["c@example.com"], status: "confirmed", organizer: "a@example.com", createdAt: "2026-01-01T10:00:00Z", attendees: [{ email: "c@example.com", response: "needsAction", respondedAt: null }], recurrence: null, seriesId: null, originalStartTime: null });
/** An error envelope as the gateway writes it, relative docUrl and all (the judge's system has no public base URL). */
const envelope = (code: ErrorCode, message: string, requestId = "req_1") => ({ error: { code, message, requestId, docUrl: errorDocUrl(code) } });
const kinds = (req: FuzzRequest, ans: RawAnswer | Error, caller: Principal | undefined = aTest) => judge(req, ans, { document, validator, world: world(), caller }).map((p) => p.kind);

describe("the fuzz's judge", () => {
  it("passes a documented answer of the caller's own data", () => {
    expect(kinds(request("GET", `/v1/meetings/${A_MEETING}`), answer(200, meeting(A_MEETING)))).toEqual([]);
    expect(kinds(request("GET", "/v1/meetings/mtg_zzzzzzzzzzzzzzzzzzzzzzzz"), answer(404, envelope("not_found", "No such meeting.")))).toEqual([]);
  });

  it("leaves the index of where things are (GET /) to the envelope checks, as it does the probes: the document does not describe it", () => {
    const index = { ...request("GET", "/"), operation: undefined };
    expect(kinds(index, answer(200, { name: "Scheduling API", api: "/v1" }))).toEqual([]);
    expect(kinds({ ...request("GET", "/v1"), operation: undefined }, answer(200, { name: "Scheduling API", api: "/v1" }))).toContain("undocumented");
  });

  it("fails a 5xx, except a 503 service_unavailable with Retry-After", () => {
    const internal = envelope("internal_error", "An internal error occurred.");
    expect(kinds(request("POST", "/v1/contacts", "[]"), answer(500, internal))).toContain("server-error");
    const unavailable = envelope("service_unavailable", "Retry shortly.");
    expect(kinds(request("POST", "/v1/contacts", "{}"), answer(503, unavailable, { "retry-after": "1" }))).not.toContain("server-error");
    expect(kinds(request("POST", "/v1/contacts", "{}"), answer(503, unavailable))).toContain("server-error");
  });

  it("fails an error without the envelope or an answer without X-Request-Id, and one that never came", () => {
    const bare: RawAnswer = { status: 400, headers: { "content-length": "0" }, body: undefined, text: "" };
    expect(kinds({ ...request("GET", "/v1/me"), headers: [], malformed: true }, bare)).toEqual(["request-id", "envelope"]);
    expect(kinds(request("GET", "/v1/me"), new Error("no answer within 15000 ms"))).toEqual(["no-answer"]);
  });

  it("fails an envelope without the docUrl of its code, with another field, or with an unknown code", () => {
    const missing = request("GET", "/v1/meetings/mtg_zzzzzzzzzzzzzzzzzzzzzzzz");
    const notFound = envelope("not_found", "No such meeting.");
    const withDocUrl = (docUrl: unknown) => ({ error: { ...notFound.error, docUrl } });
    expect(kinds(missing, answer(404, withDocUrl(undefined)))).toContain("envelope");
    expect(kinds(missing, answer(404, withDocUrl(errorDocUrl("invalid_request"))))).toContain("envelope");
    expect(kinds(missing, answer(404, withDocUrl("https://elsewhere.example/docs#section/Errors/not_found")))).toContain("envelope");
    expect(kinds(missing, answer(404, { error: { ...notFound.error, stack: "x" } }))).toContain("envelope");
    expect(kinds(missing, answer(404, { error: { ...notFound.error, code: "gone", docUrl: "/docs#section/Errors/gone" } }))).toContain("envelope");
    expect(
      judge(missing, answer(404, { error: { ...notFound.error, docUrl: errorDocUrl("not_found", "https://api.example.com") } }), {
        document,
        validator,
        world: world(),
        caller: aTest,
        publicBaseUrl: "https://api.example.com",
      }),
    ).toEqual([]);
  });

  it("fails a status or body the document does not describe", () => {
    expect(kinds(request("GET", "/v1/me"), answer(304, undefined))).toContain("undocumented");
    expect(kinds(request("GET", `/v1/meetings/${A_MEETING}`), answer(200, { ...meeting(A_MEETING), secret: 1 }))).toContain("undocumented");
  });

  it("fails a success on another user's object, or on the caller's object of the other mode", () => {
    expect(kinds(request("GET", `/v1/meetings/${B_MEETING}`), answer(200, meeting(B_MEETING)))).toContain("other-users-data");
    expect(kinds(request("GET", `/v1/meetings/${A_LIVE_MEETING}`), answer(200, meeting(A_LIVE_MEETING)))).toContain("other-users-data");
    expect(kinds(request("GET", "/v1/meetings"), answer(200, { data: [meeting(B_MEETING)], hasMore: false }))).toContain("other-users-data");
    expect(kinds(request("GET", `/v1/meetings/${A_LIVE_MEETING}`), answer(200, meeting(A_LIVE_MEETING)), { user: "a", mode: "live" })).toEqual([]);
  });

  it("fails a success that took 1e309", () => {
    const body = '{"title":"t","limit":1e309}';
    expect(kinds(request("PATCH", `/v1/meetings/${A_MEETING}`, body), answer(200, meeting(A_MEETING)))).toContain("number-out-of-range");
    expect(kinds(request("PATCH", `/v1/meetings/${A_MEETING}`, '{"title":"1e309"}'), answer(200, meeting(A_MEETING)))).toEqual([]);
  });
});

describe("the fuzz's judge on what an error tells", () => {
  const error = (message: string, requestId = "req_1") => envelope("invalid_request", message, requestId);
  it("fails an error that shows the inside, not a request id that happens to spell a library's name", () => {
    expect(kinds(request("POST", "/v1/contacts", "{"), answer(400, error("at Object.parse (/app/node_modules/x.js:1:2)")))).toContain("leak");
    expect(kinds(request("POST", "/v1/contacts", "{"), answer(400, error("Bad.", "req_1VskneXbNR"), { "x-request-id": "req_1VskneXbNR" }))).toEqual([]);
  });
});

describe("the fuzz's judge on numbers past any double", () => {
  it("does not count one a repeated key replaced", () => {
    expect(kinds(request("PATCH", `/v1/meetings/${A_MEETING}`, '{"title":1e309,"title":"t"}'), answer(200, meeting(A_MEETING)))).toEqual([]);
  });

  it("does not count one in the body of an operation that reads none (a HEAD is its GET)", () => {
    expect(kinds(request("HEAD", `/v1/meetings/${A_MEETING}`, '{"limit":1e309}'), answer(200, undefined))).toEqual([]);
    expect(kinds(request("GET", `/v1/meetings/${A_MEETING}`, '{"limit":1e309}'), answer(200, meeting(A_MEETING)))).toEqual([]);
  });
});
