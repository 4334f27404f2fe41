import type { OpenApiDocument } from "@sched/openapi";
import fc from "fast-check";
import { deepNesting, extremeDate, jsonText, mutant, nastyEmail, nastyString, RawJson, type FuzzJson } from "./values.js";
import type { FuzzWorld, Principal } from "./world.js";

/** One request exactly as it goes on the wire. */
export interface FuzzRequest {
  method: string;
  /** The request target, possibly not valid (raw bytes, broken escapes). */
  target: string;
  /** In order; names may repeat and Host may be missing. */
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` instead of a Content-Length. */
  chunked: boolean;
  /** The documented operation the request was made from, when it was; `METHOD /template`. */
  operation?: string;
  /** Not valid HTTP/1.1 (no Host, a method Node does not know…): judged by the envelope only, not by the document. */
  malformed: boolean;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

interface Operation {
  method: string;
  template: string;
  pathParams: Array<{ name: string; prefix: string | undefined }>;
  query: Array<{ name: string; required: boolean; schema: Json }>;
  body?: Json;
  admin: boolean;
}

/** A request target is visible ASCII; a space or a raw byte past it is not HTTP. */
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

/** Methods Node's parser refuses outright, and ones it knows but the API does not serve. */
const ODD_METHODS = ["get", "BREW", "GE T", "FOO_BAR"];
const OTHER_METHODS = ["HEAD", "OPTIONS", "PUT", "TRACE", "PROPFIND", "M-SEARCH", "PURGE", "DELETE", "PATCH", "POST", "GET"];

const TIME_ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns", "Etc/GMT+12", "Etc/GMT-14", "Mars/Base", "utc", "EST5EDT", "Europe/Kyiv", "Europe/Kiev", "Factory"];
const DATE_WORDS = ["today", "tomorrow", "yesterday", "monday", "next Monday", "this Friday", "in 3 days", "in 100000 days", "in -1 days", "last sunday", "next week", "31st", "Feb 30", "in 99999999999999999999 days"];

/** Every character escaped as UTF-8 would be, except that a lone surrogate becomes the invalid bytes of its code unit. */
function percentEncode(s: string): string {
  let out = "";
  for (const ch of s) {
    const unit = ch.codePointAt(0)!;
    if (unit >= 0xd800 && unit <= 0xdfff) out += `%${(0xe0 | (unit >> 12)).toString(16)}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16)}%${(0x80 | (unit & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(ch).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  }
  return out;
}

/** Query and path values, as a client would write them: encoded, or raw (not always valid in a URL). */
const asQueryText = (v: FuzzJson) => (v instanceof RawJson ? v.text : typeof v === "string" ? v : jsonText(v));

/**
 * Requests built from the OpenAPI document: every operation with its path,
 * query and body, filled with mostly valid values (so most requests reach the
 * services) and a few mutated ones at a time; plus wrong methods, unknown
 * paths and malformed HTTP, with valid keys of both modes and odd headers.
 */
export class RequestGenerator {
  private readonly operations: Operation[];

  constructor(
    private readonly document: OpenApiDocument,
    private readonly world: FuzzWorld,
  ) {
    this.operations = [];
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      for (const [method, op] of Object.entries(item as Json)) {
        if (!["get", "post", "patch", "delete", "put"].includes(method) || !isObject(op)) continue;
        const params = ((op.parameters as unknown[]) ?? []).map((p) => this.resolve(p));
        const body = isObject(op.requestBody) ? ((op.requestBody.content as Json)?.["application/json"] as Json | undefined)?.schema : undefined;
        this.operations.push({
          method: method.toUpperCase(),
          template,
          pathParams: params.filter((p) => p.in === "path").map((p) => ({ name: String(p.name), prefix: /`(\w{3})_/.exec(String(p.description ?? ""))?.[1] })),
          query: params.filter((p) => p.in === "query").map((p) => ({ name: String(p.name), required: p.required === true, schema: this.resolve(p.schema) })),
          ...(isObject(body) ? { body } : {}),
          admin: template.startsWith("/admin/"),
        });
      }
    }
  }

  /** Any request: mostly documented operations, some with another method, some not of the API at all. */
  request(): fc.Arbitrary<FuzzRequest> {
    return fc.oneof(
      { weight: 14, arbitrary: fc.constantFrom(...this.operations).chain((op) => this.forOperation(op)) },
      { weight: 2, arbitrary: fc.constantFrom(...this.operations).chain((op) => this.wrongMethod(op)) },
      { weight: 1, arbitrary: this.edge() },
    );
  }

  /** The principal a request's key stands for, if it carries one of the fuzz's valid keys first. */
  principalOf(request: FuzzRequest): Principal | undefined {
    const auth = request.headers.find(([name]) => name.toLowerCase() === "authorization")?.[1];
    if (auth === undefined) return undefined;
    if (auth.includes(this.world.keys.aLive)) return { user: "a", mode: "live" };
    if (auth.includes(this.world.keys.aTest) || auth.includes(this.world.keys.aReadOnly)) return { user: "a", mode: "test" };
    return undefined;
  }

  private forOperation(op: Operation): fc.Arbitrary<FuzzRequest> {
    const method = op.method === "GET" ? fc.constantFrom("GET", "GET", "GET", "GET", "HEAD") : fc.constant(op.method);
    const path = fc.tuple(...op.pathParams.map((p) => this.pathValue(p.prefix, op.admin))).map((values) => {
      let i = 0;
      return op.template.replace(/\{\w+\}/g, () => values[i++] ?? "x");
    });
    const body = op.body ? fc.option(this.bodyText(op.body), { freq: 12, nil: undefined }).map((b) => b ?? "") : this.unexpectedBody();
    return fc
      .record({ method, path, query: this.queryText(op), body, headers: this.headers(op.admin, op.body !== undefined, op.method === "POST"), chunked: fc.boolean() })
      .map(({ method, path, query, body, headers, chunked }) => ({
        method,
        target: `${path}${query}`,
        headers: headers.list,
        ...(body === undefined ? {} : { body: toBytes(body) }),
        chunked: chunked && body !== undefined,
        operation: `${op.method} ${op.template}`,
        malformed: headers.malformed || !VISIBLE_ASCII.test(`${path}${query}`),
      }));
  }

  private wrongMethod(op: Operation): fc.Arbitrary<FuzzRequest> {
    const documented = Object.keys((this.document.paths ?? {})[op.template] as Json).map((m) => m.toUpperCase());
    const methods = [...OTHER_METHODS.filter((m) => !documented.includes(m)), ...ODD_METHODS];
    return fc
      .record({ request: this.forOperation(op), method: fc.constantFrom(...methods) })
      .map(({ request, method }) => ({ ...request, method, operation: undefined, malformed: request.malformed || ODD_METHODS.includes(method) }));
  }

  /** Requests outside the document: unknown paths, broken escapes, odd methods, raw bytes. */
  private edge(): fc.Arbitrary<FuzzRequest> {
    const tokenChars = fc.constantFrom(..."abcXYZ019-_.~!$&'()*+,;=:@".split(""));
    const token = fc.string({ unit: tokenChars, minLength: 1, maxLength: 20 });
    const segment = fc.oneof(
      token,
      fc.string({ maxLength: 12 }).map(percentEncode),
      fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "..", ".", "", "%2F", "%2e%2e", "v1", "meetings", "V1", "Meetings"),
    );
    const path = fc.oneof(
      fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join("/")}`),
      fc.constantFrom("/", "/v1", "/v1/", "/v2/meetings", "/healthz", "/readyz", "/livez", "/docs", "/v1/openapi.json", "//v1/meetings", "/v1//meetings", "/v1/meetings/", "/v1/meetings;x=1", "/V1/MEETINGS", "*", "http://localhost/v1/me", "/v1/me#frag", "/v1/me?%", "/v1/m\u00e9", "/v1/\ud800"),
    );
    return fc
      .record({ method: fc.constantFrom("GET", "POST", "DELETE", "HEAD", "OPTIONS", "PUT", ...ODD_METHODS), path, headers: this.headers(false, true, false), body: fc.option(this.unexpectedBody(), { nil: undefined }) })
      .map(({ method, path, headers, body }) => ({
        method,
        target: path,
        headers: headers.list,
        ...(body === undefined ? {} : { body: toBytes(body) }),
        chunked: false,
        // Raw non-ASCII in the request line is not HTTP; neither is a method Node does not know.
        malformed: headers.malformed || ODD_METHODS.includes(method) || !VISIBLE_ASCII.test(path),
      }));
  }

  // ---- path and query ---------------------------------------------------------------

  private pathValue(prefix: string | undefined, admin: boolean): fc.Arbitrary<string> {
    const pools = admin ? this.world.adminIds : this.world.ids;
    const known = prefix ? (pools[prefix] ?? []) : [];
    // The admin routes never touch A's keys or account: revoking a key or lowering its limits would end the fuzz's reach.
    const all = Object.values(this.world.ids)
      .flat()
      .filter((id) => !admin || this.world.owners.get(id)?.user !== "a");
    const made = prefix ?? "xxx";
    return fc.oneof(
      ...(known.length > 0 ? [{ weight: 8, arbitrary: fc.constantFrom(...known) }] : []),
      { weight: 2, arbitrary: fc.constantFrom(...all) },
      { weight: 1, arbitrary: fc.stringMatching(/^[0-9A-Za-z]{24}$/).map((s) => `${made}_${s}`) },
      {
        weight: 2,
        arbitrary: fc.oneof(
          fc.constantFrom(`${made}_`, `${made}_${"A".repeat(23)}`, `${made}_${"A".repeat(25)}`, `${made.toUpperCase()}_${"a".repeat(24)}`, "%2F", `${made}_abc%2Fdef`, `..%2F..%2Fv1%2Fme`, `${made}_%00`, "%00", "%", "%zz", "null", "undefined", "0", "-1", "__proto__", "%20", `${made}_${"a".repeat(24)}%0A`),
          fc.constantFrom(100, 1_000, 7_000, 9_000).map((n) => `${made}_${"a".repeat(n)}`),
          nastyString.map(percentEncode),
        ),
      },
    );
  }

  private queryText(op: Operation): fc.Arbitrary<string> {
    const pair = (name: string, schema: Json) =>
      fc.oneof(
        { weight: 10, arbitrary: this.queryValue(name, schema).map((v) => [`${name}=${v}`]) },
        { weight: 1, arbitrary: fc.tuple(this.queryValue(name, schema), this.queryValue(name, schema)).map(([v, w]) => [`${name}=${v}`, `${name}=${w}`]) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom("[]", "[0]", "[a]", "[__proto__]", "[][]", ".x"), this.queryValue(name, schema)).map(([suffix, v]) => [`${name}${suffix}=${v}`]) },
        { weight: 1, arbitrary: fc.constantFrom([name], [`${name}=`], [`${name}=&${name}=`]) },
      );
    const declared = op.query.map((p) => (p.required ? fc.option(pair(p.name, p.schema), { freq: 12, nil: [] }) : fc.option(pair(p.name, p.schema), { freq: 2, nil: [] })).map((v) => v ?? []));
    const unknown = fc.option(
      fc.constantFrom(["unknown=1"], ["__proto__[polluted]=1"], ["constructor[prototype][x]=1"], ["a[b][c][d][e][f][g]=1"], ["=x"], ["&&"], [`${"p".repeat(3000)}=1`], ["x=%"], ["x=%E0%A4%A"]),
      { freq: 8, nil: [] },
    );
    return fc.tuple(fc.tuple(...declared), unknown.map((u) => u ?? [])).map(([parts, extra]) => {
      const all = [...parts.flat(), ...extra];
      return all.length === 0 ? "" : `?${all.join("&")}`;
    });
  }

  private queryValue(name: string, schema: Json): fc.Arbitrary<string> {
    return fc.oneof(
      { weight: 6, arbitrary: this.valid(schema, name, 0).map((v) => percentEncode(asQueryText(v))) },
      { weight: 1, arbitrary: mutant.filter((v) => !(v instanceof RawJson && v.text.length > 4_000)).map((v) => percentEncode(asQueryText(v))) },
      { weight: 1, arbitrary: fc.constantFrom("%", "%zz", "%00", "+", "%2B", "a b", "%E0%A4%A") },
    );
  }

  // ---- bodies ---------------------------------------------------------------------

  /** A JSON body of the operation's schema, a few fields mutated at a time, sometimes broken as a whole. */
  private bodyText(schema: Json): fc.Arbitrary<string | Buffer> {
    const text = this.value(schema, "", 0).map(jsonText);
    return fc.oneof(
      { weight: 16, arbitrary: text },
      { weight: 1, arbitrary: fc.tuple(text, mutant).map(([t, v]) => (t.startsWith("{") && t.length > 2 ? `{${firstKey(t)}:${jsonText(v)},${t.slice(1)}` : t)) },
      { weight: 1, arbitrary: fc.tuple(text, fc.constantFrom("x", " ", "\u0000", "}", ",", "\n{}")).map(([t, tail]) => `${t}${tail}`) },
      { weight: 1, arbitrary: fc.tuple(text, fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(1, t.length))) },
      { weight: 1, arbitrary: text.map((t) => `\ufeff${t}`) },
      { weight: 1, arbitrary: text.map((t) => `[${t}]`) },
      { weight: 1, arbitrary: fc.constantFrom("", "null", "1", '"s"', "true", "[]", "{}", "NaN", "{'a':1}", "email=a%40b.c", '{"a":1', "\u0000") },
      { weight: 1, arbitrary: deepNesting.map((v) => jsonText(v)) },
      { weight: 1, arbitrary: fc.tuple(text, fc.constantFrom(102_400 - 20, 102_400, 102_401, 200_000)).map(([t, size]) => (t.startsWith("{") ? `{"description":"${"a".repeat(size)}",${t.slice(1)}` : t)) },
      { weight: 1, arbitrary: fc.tuple(text, fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82])).map(([t, bytes]) => withInvalidUtf8(t, bytes)) },
    );
  }

  /** Most GET and DELETE requests have no body; some carry one anyway. */
  private unexpectedBody(): fc.Arbitrary<string | undefined> {
    return fc.option(fc.constantFrom("", "{}", '{"a":1}', "not json", `${"[".repeat(20_000)}${"]".repeat(20_000)}`), { freq: 10, nil: undefined });
  }

  /** A value for a field: mostly valid for its schema, sometimes a mutant. */
  private value(schema: Json, name: string, depth: number): fc.Arbitrary<FuzzJson> {
    return fc.oneof({ weight: 9, arbitrary: this.valid(schema, name, depth) }, { weight: 1, arbitrary: mutant });
  }

  /** A value its schema accepts (as far as the schema can say; the services check more). */
  private valid(raw: unknown, name: string, depth: number): fc.Arbitrary<FuzzJson> {
    const schema = this.resolve(raw);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as FuzzJson[]));
    if ("const" in schema) return fc.constant(schema.const as FuzzJson);
    const variants = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
    if (Array.isArray(variants)) return fc.oneof(...variants.map((v) => this.valid(v, name, depth)));
    if (Array.isArray(schema.type)) return fc.oneof(...(schema.type as string[]).map((type) => this.valid({ ...schema, type }, name, depth)));
    switch (schema.type) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return fc.integer({ min: Number(schema.minimum ?? -1_000), max: Number(schema.maximum ?? 1_000) });
      case "number":
        return fc.double({ min: Number(schema.minimum ?? -1_000), max: Number(schema.maximum ?? 1_000), noNaN: true });
      case "array": {
        const max = Math.min(Number(schema.maxItems ?? 4), 4);
        return fc.array(this.value(this.resolve(schema.items), name, depth + 1), { minLength: Math.min(Number(schema.minItems ?? 0), max), maxLength: max });
      }
      case "object":
        return this.object(schema, depth);
      default:
        return this.validString(schema, name);
    }
  }

  private object(schema: Json, depth: number): fc.Arbitrary<FuzzJson> {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    const model: Record<string, fc.Arbitrary<FuzzJson>> = {};
    for (const [key, property] of Object.entries(properties)) model[key] = this.value(property as Json, key, depth + 1);
    const record = fc.record(model, { requiredKeys: required.filter((k) => k in model) }) as fc.Arbitrary<Record<string, FuzzJson>>;
    // Now and then a required field goes missing or an unknown one comes along.
    return fc.tuple(record, fc.option(fc.constantFrom(...required, "unknownField", "__proto__", "constructor"), { freq: 12, nil: undefined }), mutant).map(([value, odd, extra]) => {
      if (odd === undefined) return value;
      const copy: Record<string, FuzzJson> = {};
      for (const [k, v] of Object.entries(value)) if (k !== odd) copy[k] = v;
      if (!required.includes(odd)) Object.defineProperty(copy, odd, { value: extra, enumerable: true, writable: true, configurable: true });
      return copy;
    });
  }

  private validString(schema: Json, name: string): fc.Arbitrary<FuzzJson> {
    const { a, b, contact } = this.world.emails;
    if (schema.format === "email") return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(contact, b, a, "guest@example.com", "Guest@Example.COM") }, { weight: 2, arbitrary: fc.emailAddress() }, { weight: 1, arbitrary: nastyEmail });
    if (name === "timezone") return fc.constantFrom(...TIME_ZONES);
    if (name === "date") return fc.oneof(fc.constantFrom(...DATE_WORDS), futureDate().map((d) => d.slice(0, 10)), extremeDate);
    if (name === "from" || name === "to") return fc.oneof(futureDate(), futureDate().map((d) => d.slice(0, 10)), extremeDate);
    if (typeof schema.pattern === "string") {
      if (schema.pattern.includes("T\\d{2}")) return fc.oneof({ weight: 6, arbitrary: futureDate() }, { weight: 1, arbitrary: extremeDate });
      return fc.stringMatching(new RegExp(schema.pattern));
    }
    const max = Math.min(Number(schema.maxLength ?? 40), 40);
    const min = Math.min(Number(schema.minLength ?? 0), max);
    return fc.oneof(fc.string({ minLength: Math.max(min, 1), maxLength: max, unit: "grapheme" }), fc.string({ minLength: min, maxLength: max }));
  }

  // ---- headers --------------------------------------------------------------------

  private headers(admin: boolean, hasBody: boolean, isPost: boolean): fc.Arbitrary<{ list: Array<[string, string]>; malformed: boolean }> {
    const { aTest, aLive, aReadOnly, revoked, admin: adminToken } = this.world.keys;
    const key = admin ? adminToken : aTest;
    const host = fc.oneof(
      { weight: 30, arbitrary: fc.constant({ list: [["Host", "localhost"]] as Array<[string, string]>, malformed: false }) },
      { weight: 1, arbitrary: fc.constantFrom<{ list: Array<[string, string]>; malformed: boolean }>({ list: [], malformed: true }, { list: [["Host", "a"], ["Host", "b"]], malformed: true }, { list: [["Host", ""]], malformed: false }, { list: [["Host", "exa mple"]], malformed: true }, { list: [["Host", "h".repeat(5_000)]], malformed: false }, { list: [["Host", "[::1]:99999"]], malformed: false }) },
    );
    const auth = fc.oneof(
      { weight: 12, arbitrary: fc.constant([`Bearer ${key}`]) },
      { weight: admin ? 0 : 6, arbitrary: fc.constant([`Bearer ${aLive}`]) },
      { weight: 1, arbitrary: fc.constantFrom([`Bearer ${aReadOnly}`], [`Bearer ${revoked}`], [`Bearer ${admin ? aTest : adminToken}`], []) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          ["Bearer"],
          ["Bearer "],
          [`Bearer  ${key}`],
          [`bearer ${key}`],
          [`BEARER ${key}`],
          [`Bearer ${key} `],
          [`Bearer ${key}x`],
          [`Bearer ${key.slice(0, -1)}`],
          [`Basic ${Buffer.from(`${key}:`).toString("base64")}`],
          [key],
          [`Bearer ${key}`, `Bearer ${key}`],
          [`Bearer ${key}`, "Bearer sk_test_other"],
          [`Bearer sk_test_${"a".repeat(10_000)}`],
          [`Bearer sk_live_${"0".repeat(32)}`],
          [`Bearer sk_test_${"é".repeat(32)}`],
          [`Bearer ${key}\u0000`],
          [`Bearer ${key},Bearer ${key}`],
        ),
      },
    );
    const contentType = fc.oneof(
      { weight: 24, arbitrary: fc.constant(hasBody ? ["application/json"] : []) },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          [],
          ["application/json", "application/json"],
          ["application/json", "text/plain"],
          ["application/json; charset=utf-8"],
          ["application/json; charset=latin1"],
          ["application/json;charset=\"UTF-8\""],
          ["APPLICATION/JSON"],
          ["application/json; boundary=x; charset=utf-16"],
          ["text/plain"],
          ["application/x-www-form-urlencoded"],
          ["multipart/form-data; boundary=x"],
          ["application/merge-patch+json"],
          ["application/vnd.api+json"],
          [""],
          ["application/jsonx"],
          ["*/*"],
          [";;;"],
        ),
      },
    );
    const idempotencyKey = fc.oneof(
      { weight: 8, arbitrary: fc.constant([]) },
      { weight: isPost ? 6 : 1, arbitrary: fc.uuid().map((u) => [u]) },
      { weight: isPost ? 2 : 0, arbitrary: fc.constantFrom(["fuzz-replayed-key"], ["fuzz-replayed-key-2"]) },
      { weight: 1, arbitrary: fc.constantFrom([""], [" "], ["k".repeat(255)], ["k".repeat(256)], ["k".repeat(10_000)], ["ключ"], ["a\tb"], ["a", "b"], ["%00"], ["'; --"]) },
    );
    const extra = fc.array(
      fc.oneof(
        fc.constantFrom<[string, string]>(
          ["Accept", "*/*"],
          ["Accept", "application/json"],
          ["Accept", "text/html"],
          ["Accept", "application/xml"],
          ["Accept", "application/json;q=0"],
          ["Accept", "text/event-stream"],
          ["Accept", "\u00ff\u00fe"],
          ["Accept", `${"a/b,".repeat(2_000)}`],
          ["Accept-Encoding", "gzip, br"],
          ["Accept-Charset", "latin1"],
          ["Content-Encoding", "gzip"],
          ["Content-Encoding", "identity"],
          ["Expect", "100-continue"],
          ["Expect", "teapot"],
          ["X-Request-Id", "fuzz-request-1"],
          ["X-Request-Id", "r".repeat(129)],
          ["X-Request-Id", "bad id with spaces"],
          ["X-Request-Id", "é"],
          ["X-Forwarded-For", "1.2.3.4, ::1, nonsense"],
          ["X-HTTP-Method-Override", "DELETE"],
          ["Range", "bytes=0-1"],
          ["If-None-Match", "*"],
          ["Cookie", "a=b"],
          ["Origin", "https://evil.example"],
        ),
        fc.tuple(fc.constantFrom("X-Request-Id", "Accept", "X-Custom", "Idempotency-Key"), fc.string({ unit: fc.constantFrom(..." abcXYZ019-_.,;=/\"'{}[]:".split("")), maxLength: 40 })),
      ),
      { maxLength: 2 },
    );
    return fc.record({ host, auth, contentType, idempotencyKey, extra }).map(({ host, auth, contentType, idempotencyKey, extra }) => {
      const list: Array<[string, string]> = [...host.list, ["Connection", "close"]];
      for (const v of auth) list.push(["Authorization", v]);
      for (const v of contentType) list.push(["Content-Type", v]);
      for (const v of idempotencyKey) list.push(["Idempotency-Key", v]);
      list.push(...extra);
      // NUL and line breaks in a header value are not HTTP; Node refuses the request.
      const badValue = list.some(([, v]) => [...v].some((c) => c !== "\t" && (c < " " || c === "\u007f")));
      return { list, malformed: host.malformed || badValue };
    });
  }

  private resolve(value: unknown): Json {
    if (!isObject(value) || typeof value.$ref !== "string") return isObject(value) ? value : {};
    let target: unknown = this.document;
    for (const part of value.$ref.replace(/^#\//, "").split("/")) target = isObject(target) ? target[part] : undefined;
    return this.resolve(target);
  }
}

/** Meeting times a client would send: the next few years, with or without an offset. */
function futureDate(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.date({ min: new Date("2027-01-01T00:00:00Z"), max: new Date("2031-12-31T00:00:00Z"), noInvalidDate: true }), fc.constantFrom("Z", "", "+02:00", "-05:30", ".250Z"))
    .map(([d, zone]) => `${d.toISOString().slice(0, 16).replace(/:\d{2}$/, (m) => (Number(m.slice(1)) < 30 ? ":00" : ":30"))}:00${zone}`);
}

function firstKey(text: string): string {
  const match = /^\{("(?:[^"\\]|\\.)*")/.exec(text);
  return match ? match[1]! : '"title"';
}

function withInvalidUtf8(text: string, bytes: readonly number[]): Buffer {
  const quote = text.indexOf('"', 2);
  const at = quote > 0 ? Buffer.byteLength(text.slice(0, quote)) : 0;
  const encoded = Buffer.from(text, "utf8");
  return Buffer.concat([encoded.subarray(0, at), Buffer.from(bytes), encoded.subarray(at)]);
}

function toBytes(body: string | Buffer): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : body;
}
