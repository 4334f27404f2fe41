import { AppError } from "@sched/errors";
import { buildOpenApiDocument, OPENAPI_JSON_PATH } from "@sched/openapi";
import { API_VERSION, REFERENCE_PAGE_PATH, type RouteDef } from "@sched/proto";
import type { NextFunction, RequestHandler, Response } from "express";
import { createRequire } from "node:module";

/** Redoc's self-contained bundle, served from the project's own dependencies (no CDN). */
const REDOC_BUNDLE = createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js");
const REDOC_PATH = "/docs/redoc.standalone.js";

/** The paths these pages answer; every other path under /v1/ is a route's. */
export const DOCS_PATHS: ReadonlySet<string> = new Set(["/", OPENAPI_JSON_PATH, REFERENCE_PAGE_PATH, REDOC_PATH]);

/**
 * The page runs only the bundle from this origin. Redoc styles itself with
 * inline <style> elements and runs its search index in a blob: worker.
 */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Scheduling API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="${OPENAPI_JSON_PATH}" native-scrollbars></redoc>
<script src="${REDOC_PATH}"></script>
</body>
</html>
`;

type Page = (res: Response, next: NextFunction) => void;

/** `GET /`: where things are, for a person or a program that finds the API's address and nothing else. */
/** Where things are; `dashboard` when the gateway serves its pages too (standalone mode). */
const indexOf = (dashboard: string | undefined) =>
  JSON.stringify({
    name: "Scheduling API",
    version: API_VERSION,
    api: "/v1",
    reference: REFERENCE_PAGE_PATH,
    openapi: OPENAPI_JSON_PATH,
    ...(dashboard ? { dashboard } : {}),
    health: { live: "/healthz", ready: "/readyz" },
    authentication: "Authorization: Bearer sk_test_… or sk_live_…",
  });

/**
 * The API's description, without authentication: where things are (`/`),
 * the OpenAPI document of the routes the gateway serves, and a reference
 * page rendering it. A plain
 * middleware rather than an express Router, which would answer OPTIONS
 * itself: a preflight is refused by the gateway like any other.
 */
export function docsHandler(routes: readonly RouteDef[], dashboardPath?: string): RequestHandler {
  const index = indexOf(dashboardPath);
  // Built on first use: a route the document cannot describe fails these pages, not the gateway.
  let documentJson: string | undefined;
  const pages: Record<string, Page> = {
    "/": (res) => {
      res.type("application/json").set("Cache-Control", "no-cache").send(index);
    },
    [OPENAPI_JSON_PATH]: (res) => {
      documentJson ??= JSON.stringify(buildOpenApiDocument(routes));
      res.type("application/json").set("Cache-Control", "no-cache").send(documentJson);
    },
    [REFERENCE_PAGE_PATH]: (res) => {
      res.type("html").set({ "Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-cache" }).send(PAGE);
    },
    [REDOC_PATH]: (res, next) => {
      res.sendFile(REDOC_BUNDLE, { maxAge: "1h", headers: { "Content-Type": "text/javascript; charset=utf-8" } }, (err) => {
        if (err) next(err);
      });
    },
  };
  return (req, res, next) => {
    const page = Object.hasOwn(pages, req.path) ? pages[req.path] : undefined;
    if (!page || req.method === "OPTIONS") return next();
    if (req.method !== "GET" && req.method !== "HEAD") {
      throw new AppError("method_not_allowed", `${req.method} is not allowed on ${req.path}.`, { allow: ["GET"] });
    }
    page(res, next);
  };
}
