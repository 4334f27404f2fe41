import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ErrorCode } from "@sched/proto";
import { docUrlPattern } from "./components.js";
import type { OpenApiDocument } from "./document.js";

// ajv-formats is CommonJS with a default export; under NodeNext the module object arrives.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** What a client saw: enough of a response to judge it against the document. */
export interface ObservedResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when the body was empty. */
  body: unknown;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** `~` and `/` escaped for a JSON pointer. */
const pointerPart = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Judges responses against the OpenAPI document: the status must be listed
 * for the operation, every required header present and of its schema, and
 * the body of the documented media type and schema (objects are closed, so an
 * undocumented field fails). Requests to no documented operation must be
 * answered as api-decisions part 1 says: 403 for a preflight, 405 with the
 * documented methods in Allow, 404 otherwise, each with the error envelope.
 * Returns the problems found; none means the response is documented.
 */
export class ResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ path: string; segments: string[] }>;

  constructor(private readonly document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(document as unknown as Json, "openapi.json", undefined, false);
    this.templates = Object.keys(document.paths ?? {}).map((path) => ({ path, segments: path.split("/") }));
  }

  check(method: string, url: string, response: ObservedResponse): string[] {
    const path = new URL(url, "http://localhost").pathname.replace(/(.)\/$/, "$1");
    const verb = method.toLowerCase() === "head" ? "get" : method.toLowerCase();
    const where = `${method.toUpperCase()} ${path} → ${response.status}`;
    const problems = this.unmatched(verb, path, response) ?? this.matched(verb, path, response, method.toLowerCase() !== "head");
    return problems.map((p) => `${where}: ${p}`);
  }

  private unmatched(verb: string, path: string, response: ObservedResponse): string[] | undefined {
    if (verb === "options") return this.expectError(response, 403, "forbidden");
    const template = this.templates.find((t) => matches(t.segments, path.split("/")));
    if (!template) return this.expectError(response, 404, "not_found");
    const item = this.document.paths![template.path] as Json;
    if (isObject(item[verb])) return undefined;
    const allow = METHODS.filter((m) => isObject(item[m])).map((m) => m.toUpperCase()).sort().join(", ");
    const problems = this.expectError(response, 405, "method_not_allowed");
    if (response.headers.get("allow") !== allow) problems.push(`Allow is "${response.headers.get("allow")}", the document's methods are "${allow}"`);
    return problems;
  }

  private matched(verb: string, path: string, response: ObservedResponse, withBody: boolean): string[] {
    const template = this.templates.find((t) => matches(t.segments, path.split("/")))!;
    const pointer = `#/paths/${pointerPart(template.path)}/${verb}/responses/${response.status}`;
    const operation = (this.document.paths![template.path] as Json)[verb] as Json;
    const documented = (operation.responses as Json)[String(response.status)];
    if (!isObject(documented)) return [`status ${response.status} is not documented for this operation`];
    // A HEAD answer is the GET answer without its body.
    return [...this.checkHeaders(documented, response), ...(withBody ? this.checkBody(documented, pointer, response) : [])];
  }

  /** The error envelope with this status and code, as for a request no operation takes. */
  private expectError(response: ObservedResponse, status: number, code: ErrorCode): string[] {
    const problems: string[] = [];
    if (response.status !== status) problems.push(`no documented operation: expected ${status} ${code}`);
    const errors = this.validateEnvelope(code, response.body);
    if (errors) problems.push(`body is not the ${code} error envelope: ${errors}`);
    if (!response.headers.get("x-request-id")) problems.push("X-Request-Id is missing");
    return problems;
  }

  private checkHeaders(documented: Json, response: ObservedResponse): string[] {
    const problems: string[] = [];
    for (const [name, raw] of Object.entries(isObject(documented.headers) ? documented.headers : {})) {
      const header = this.resolve(raw);
      const value = response.headers.get(name);
      if (value === null) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      const schema = isObject(header.schema) ? header.schema : {};
      const typed = schema.type === "integer" || schema.type === "number" ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
      const ok = this.ajv.validate(schema, typed);
      if (!ok) problems.push(`header ${name}: "${value}" ${this.ajv.errorsText(this.ajv.errors)}`);
    }
    return problems;
  }

  private checkBody(documented: Json, pointer: string, response: ObservedResponse): string[] {
    const content = isObject(documented.content) ? documented.content : undefined;
    if (!content) return response.body === undefined ? [] : ["a body was sent where the document has none"];
    const contentType = response.headers.get("content-type") ?? "";
    const mediaType = Object.keys(content).find((m) => contentType.split(";")[0]!.trim() === m);
    if (!mediaType) return [`Content-Type "${contentType}" is not one of ${Object.keys(content).join(", ")}`];
    const errors = this.validate(`${pointer}/content/${pointerPart(mediaType)}/schema`, response.body);
    return errors ? [`body does not match the schema: ${errors} in ${JSON.stringify(response.body)}`] : [];
  }

  /**
   * Against the error envelope with this code. Codes no operation answers
   * (`method_not_allowed`) have no component, so the envelope is taken from
   * one that always exists, with the code swapped.
   */
  private validateEnvelope(code: ErrorCode, body: unknown): string | undefined {
    const key = `envelope:${code}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      const schema = structuredClone(this.resolve({ $ref: "#/components/schemas/InternalErrorError" }));
      const error = (schema.properties as Json).error as Json;
      const fields = error.properties as Json;
      fields.code = { type: "string", const: code };
      fields.docUrl = { ...(fields.docUrl as Json), pattern: docUrlPattern(code).source };
      validate = this.ajv.compile(schema);
      this.compiled.set(key, validate);
    }
    return validate(body) ? undefined : this.ajv.errorsText(validate.errors);
  }

  /** The validation errors of a value against the schema at a pointer into the document, if any. */
  private validate(pointer: string, value: unknown): string | undefined {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate(value) ? undefined : this.ajv.errorsText(validate.errors);
  }

  private resolve(value: unknown): Json {
    if (!isObject(value) || typeof value.$ref !== "string") return isObject(value) ? value : {};
    let target: unknown = this.document;
    for (const part of value.$ref.replace(/^#\//, "").split("/")) {
      target = isObject(target) ? target[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    }
    return isObject(target) ? target : {};
  }
}

function matches(template: string[], actual: string[]): boolean {
  return template.length === actual.length && template.every((t, i) => (t.startsWith("{") ? actual[i] !== "" : t === actual[i]));
}
