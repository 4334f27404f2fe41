import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { API_VERSION, errorDocUrl, isRedirect, publicRoutes, type ErrorCode, type RouteDef } from "@sched/proto";
import type { z } from "zod";
import { errorComponentName, errorComponents, nameComponents, SAMPLE_BASE_URL } from "./components.js";
import { byStatus, EDGE_CODES, ERROR_SAMPLES, errorMeaning, errorsSection, routeErrorCodes } from "./errorCodes.js";
import { codeSamples } from "./codeSamples.js";
import { EXAMPLES } from "./examples.js";
import { HEADER_COMPONENTS, HEADER_PARAMETERS, responseHeaders, type HeaderContext } from "./headers.js";
import { closeResponseSchemas, dropStringChecksOfIntegerParameters } from "./postprocess.js";
import { registerWebhooks } from "./webhooks.js";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

/** Where the gateway serves the document, without authentication. */
export const OPENAPI_JSON_PATH = "/v1/openapi.json";

const SAMPLE_REQUEST_ID = "req_8ZtV2pQ5xN1mK7wR4cL9bY3e";

const TAGS = [
  { name: "Meetings", description: "The meetings of the user's calendar: the ones they organize and the ones they are invited to." },
  { name: "Availability", description: "Free and busy time of one day, and recommended times across participants." },
  { name: "Contacts", description: "Trusted contacts: a contact sees the user's availability and counts for recommendations." },
  { name: "Account", description: "The authenticated user's own account: name, time zone and working hours." },
  { name: "Events", description: "Every change to the user's meetings, as an event: the list of the last 30 days, for catching up after downtime, and the events webhooks deliver." },
  { name: "Webhooks", description: "Endpoints that receive the user's events as signed HTTP POSTs (Standard Webhooks), with retries for 3 days, and their deliveries." },
  { name: "Calendar connections", description: "The calendar provider the user connects (Google Calendar, OAuth 2.0): invites are sent through it, and its busy time counts in availability." },
  {
    name: "Admin",
    description:
      "Operator only: the dashboard's job (creating users and API keys) until a dashboard exists. Authenticated with the admin token (`Authorization: Bearer <ADMIN_TOKEN>`), never with an `sk_` key, and not rate limited per key. Listed here, in their own tag, so that one document describes every route the gateway serves.",
  },
  { name: "Reference", description: "This document." },
];

const TAG_BY_SEGMENT: Record<string, string> = { me: "Account", meetings: "Meetings", availability: "Availability", contacts: "Contacts", "calendar-connections": "Calendar connections", "provider-notifications": "Calendar connections", events: "Events", "webhook-endpoints": "Webhooks" };

const DESCRIPTION = `A JSON-over-HTTP scheduling API: meetings, availability, recommended times and trusted contacts.

**Authentication.** Every \`/v1\` request carries \`Authorization: Bearer <API_KEY>\`. Keys start with \`sk_test_\` or \`sk_live_\`; a test key sees and changes only test data, a live key only live data. Keys are for servers: the API sends no CORS headers and answers a browser preflight (\`OPTIONS\`) with 403 \`forbidden\`. A key lacking an operation's scope gets 403 \`forbidden\` naming the scope.

**Request ids.** Every response carries \`X-Request-Id\` (yours when it is sane, otherwise a generated one); error bodies repeat it as \`error.requestId\`.

**Rate limits**, per API key in one-minute windows: 100 requests on every \`/v1\` operation except \`POST /v1/availability/recommended\`, which has its own 10. Every response that passed authentication carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds). A 429 adds \`Retry-After\`. Failed authentications are limited per client address.

**Idempotency.** POSTs that create something accept \`Idempotency-Key\`: a retry with the same key and body answers the first response again and creates nothing.

**Datetimes** in responses are UTC with second precision, \`YYYY-MM-DDTHH:mm:ssZ\`. In requests any ISO 8601 datetime is accepted; one without an offset is read in the user's time zone.

${errorsSection()}`;

function tagOf(route: RouteDef): string {
  if (route.auth === "admin") return "Admin";
  const segment = route.path.split("/")[2] ?? "";
  return TAG_BY_SEGMENT[segment] ?? segment.charAt(0).toUpperCase() + segment.slice(1);
}

function operationDescription(route: RouteDef): string {
  const { deprecation } = route;
  const notice = deprecation
    ? ` **Deprecated** since ${deprecation.since}; it may stop answering after ${deprecation.sunset} ([migration guide](${deprecation.link})). Every answer carries \`Deprecation\`, \`Sunset\` and \`Link\` headers.`
    : "";
  return access(route) + notice;
}

function access(route: RouteDef): string {
  if (route.auth === "admin") return "Admin token; not rate limited.";
  if (route.auth === "none")
    return route.path.startsWith("/v1/provider-notifications/")
      ? "No API key: the provider calls it; the channel's secret it carries back (Google's channel token, Graph's `clientState`) must match, and anything else is ignored with the same answer."
      : "No API key: the browser arrives here from the provider's consent page; the `state` parameter identifies the user.";
  const bucket = route.bucket === "ai" ? "the AI-powered bucket (10 requests a minute per key)" : "the standard bucket (100 requests a minute per key)";
  return `Scope \`${route.scope ?? "none"}\`; counts against ${bucket}.`;
}

/** The `{params, query, body}` schemas of a route's request. */
function requestParts(route: RouteDef): { params: z.ZodObject; query: z.ZodObject; body: z.ZodType } {
  const shape = (route.endpoint.request as Partial<z.ZodObject>).shape as Record<string, z.ZodType> | undefined;
  if (!shape?.params || !shape.query || !shape.body) {
    throw new Error(`${route.method} ${route.path}: the request schema is not httpRequest({params, query, body})`);
  }
  return { params: shape.params as z.ZodObject, query: shape.query as z.ZodObject, body: shape.body };
}

function oneOrAnyOf(refs: Array<{ $ref: string }>) {
  return refs.length === 1 ? refs[0]! : { anyOf: refs };
}

function errorResponse(route: HeaderContext, status: number, codes: ErrorCode[]) {
  return {
    description: codes.map((code) => `\`${code}\`: ${errorMeaning(code)}.`).join(" "),
    headers: responseHeaders(route, status),
    content: {
      "application/json": {
        schema: oneOrAnyOf(codes.map((code) => ({ $ref: `#/components/schemas/${errorComponentName(code)}` }))),
        examples: Object.fromEntries(codes.map((code) => [code, { $ref: `#/components/examples/${code}` }])),
      },
    },
  };
}

function operation(route: RouteDef): RouteConfig {
  const key = `${route.method} ${route.path}`;
  const examples = EXAMPLES[key];
  const { params, query, body } = requestParts(route);
  const responses: RouteConfig["responses"] = {};
  // The contract's own reply schemas, the ones the handler's return type comes from.
  for (const [status, replyBody] of Object.entries(route.endpoint.replies)) {
    const example = examples?.responses[Number(status)];
    const description: string | undefined = route.responses[Number(status)];
    if (description === undefined) throw new Error(`${key}: the route declares no responses entry for its ${status} answer, so the document cannot describe it`);
    if (isRedirect(replyBody)) {
      responses[status] = { description, headers: { ...responseHeaders(route, Number(status)), Location: { $ref: "#/components/headers/Location" } } };
      continue;
    }
    responses[status] = {
      description,
      headers: responseHeaders(route, Number(status)),
      // A bare string answer is plain text (the gateway sends it so): Graph's handshake token.
      ...(replyBody ? { content: { [replyBody.def.type === "string" ? "text/plain" : "application/json"]: { schema: replyBody, ...(example !== undefined ? { example } : {}) } } } : {}),
    };
  }
  for (const [status, codes] of byStatus(routeErrorCodes(route))) responses[status] = errorResponse(route, status, codes);
  const ref = (name: keyof typeof HEADER_PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });
  return {
    method: route.method.toLowerCase() as RouteConfig["method"],
    path: route.path.replace(/:(\w+)/g, "{$1}"),
    operationId: route.operationId,
    summary: route.summary,
    description: operationDescription(route),
    ...(route.deprecation ? { deprecated: true } : {}),
    "x-codeSamples": codeSamples(route, { params, query }, examples?.request),
    tags: [tagOf(route)],
    security: route.auth === "none" ? [] : [route.auth === "admin" ? { adminToken: [] } : { apiKey: [] }],
    parameters: [ref("RequestId"), ...(route.idempotent ? [ref("IdempotencyKey")] : [])],
    request: {
      params,
      query,
      ...(route.hasBody
        ? { body: { required: true, content: { "application/json": { schema: body, ...(examples?.request !== undefined ? { example: examples.request } : {}) } } } }
        : {}),
    },
    responses,
  };
}

/** The operation serving this document; it sits outside the route table. */
function documentOperation(): RouteConfig {
  const unauthenticated: HeaderContext = { auth: "none" };
  return {
    method: "get",
    path: OPENAPI_JSON_PATH,
    operationId: "openapiDocument",
    summary: "This OpenAPI document",
    description: "The OpenAPI 3.1 description of the API, generated from the same schemas that validate requests. No authentication.",
    tags: ["Reference"],
    security: [],
    parameters: [{ $ref: "#/components/parameters/RequestId" }],
    responses: {
      200: {
        description: "The OpenAPI document",
        headers: responseHeaders(unauthenticated, 200),
        content: {
          "application/json": {
            schema: {
              type: "object",
              properties: {
                openapi: { type: "string", pattern: "^3\\.1\\.", description: "The OpenAPI version of the document." },
                info: { type: "object", description: "The API's title, version and introduction." },
                paths: { type: "object", description: "Every operation, by path and method." },
              },
              required: ["openapi", "info", "paths"],
              additionalProperties: true,
            },
          },
        },
      },
      ...Object.fromEntries(byStatus([...EDGE_CODES, "internal_error"]).map(([status, codes]) => [status, errorResponse(unauthenticated, status, codes)])),
    },
  };
}

/** The OpenAPI 3.1 document of the routes (by default the gateway's whole table). */
export function buildOpenApiDocument(routes: readonly RouteDef[] = publicRoutes): OpenApiDocument {
  nameComponents();
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key, `sk_test_…` or `sk_live_…`, sent as `Authorization: Bearer <API_KEY>`. Keys are made by the admin API (the dashboard's job) and shown once.",
  });
  registry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The operator's admin token (`ADMIN_TOKEN` of the gateway), for the Admin operations only.",
  });
  for (const [name, parameter] of Object.entries(HEADER_PARAMETERS)) registry.registerComponent("parameters", name, parameter);
  for (const [name, header] of Object.entries(HEADER_COMPONENTS)) registry.registerComponent("headers", name, header);
  const usedCodes = new Set<ErrorCode>(["internal_error", ...routes.flatMap(routeErrorCodes)]);
  for (const code of usedCodes) {
    registry.registerComponent("examples", code, {
      summary: errorMeaning(code),
      value: { error: { code, ...ERROR_SAMPLES[code], requestId: SAMPLE_REQUEST_ID, docUrl: errorDocUrl(code, SAMPLE_BASE_URL) } },
    });
  }
  for (const route of routes) registry.registerPath(operation(route));
  registry.registerPath(documentOperation());
  registerWebhooks(registry);

  const document = new OpenApiGeneratorV31([...registry.definitions, ...errorComponents(usedCodes)]).generateDocument({
    openapi: "3.1.0",
    info: { title: "Scheduling API", version: API_VERSION, description: DESCRIPTION },
    servers: [{ url: "/", description: "The gateway serving this document" }],
    security: [{ apiKey: [] }],
    tags: TAGS,
  });
  closeResponseSchemas(document as unknown as Record<string, unknown>);
  dropStringChecksOfIntegerParameters(document as unknown as Record<string, unknown>);
  return document;
}
