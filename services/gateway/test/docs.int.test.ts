import { createLogger } from "@sched/logging";
import { API_VERSION, publicRoutes } from "@sched/proto";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { docsHandler } from "../src/inbound/http/docs.js";
import { errorMiddleware } from "../src/inbound/http/errors.js";

function docsApp() {
  const app = express();
  app.use(docsHandler(publicRoutes));
  app.use((_req, res) => {
    res.status(404).json({ fellThrough: true });
  });
  app.use(errorMiddleware(createLogger({ name: "docs-test", level: "silent" })));
  return app;
}

describe("the API description served by the gateway", () => {
  const app = docsApp();

  it("says at / where the API, its reference and its document are, each of which answers", async () => {
    const index = await request(app).get("/");
    expect(index.status).toBe(200);
    expect(index.body).toMatchObject({ name: "Scheduling API", version: API_VERSION, api: "/v1", reference: "/docs", openapi: "/v1/openapi.json" });
    for (const path of [index.body.reference, index.body.openapi]) expect((await request(app).get(path)).status, path).toBe(200);
  });

  it("serves the OpenAPI document without authentication", async () => {
    const res = await request(app).get("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe("3.1.0");
    expect(Object.keys(res.body.paths)).toContain("/v1/meetings/{id}");
  });

  it("answers another method on the document with 405 and Allow, and leaves a preflight to the gateway", async () => {
    const res = await request(app).post("/v1/openapi.json").send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET");
    expect(res.body.error.code).toBe("method_not_allowed");
    expect((await request(app).options("/v1/openapi.json")).body).toEqual({ fellThrough: true });
  });

  it("serves the reference page with Redoc from the project's own dependencies, nothing from another origin", async () => {
    const page = await request(app).get("/docs");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.text).toContain('<redoc spec-url="/v1/openapi.json"');
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");

    const bundle = await request(app).get("/docs/redoc.standalone.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(Number(bundle.headers["content-length"])).toBeGreaterThan(100_000);
  });
});
