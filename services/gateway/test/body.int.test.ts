import type { AppError } from "@sched/errors";
import express from "express";
import { request, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonBodyReader } from "../src/inbound/http/body.js";

let server: Server;
let port: number;

// Answers what the reader made of a body, or the code and status it refused it with: read as the request comes
// in ("/"), or once Node has read all of it, as the gateway reads it after its checks ("/later").
beforeAll(async () => {
  const read = jsonBodyReader(4);
  const app = express();
  app.post(["/", "/later"], (req, res) => {
    const reading = req.path === "/later" ? new Promise<void>((r) => setTimeout(r, 20)).then(() => read(req, res)) : read(req, res);
    reading.then(
      (body) => res.json({ body: body ?? null }),
      (err: unknown) => {
        const e = err as AppError;
        res.status(e.status).json({ code: e.code });
      },
    );
  });
  server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A POST whose body goes out in `chunks` (chunked unless a Content-Length is given), and its answer. */
function post(chunks: Array<string | Buffer>, headers: Record<string, string> = {}, path = "/"): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, method: "POST", path, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on("error", reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe("the gateway's JSON body reader", () => {
  it("parses a body sent in pieces, drops a leading byte order mark, and reads an empty chunked body as {}", async () => {
    expect(await post(['{"title":', '"a"}'])).toEqual({ status: 200, json: { body: { title: "a" } } });
    expect(await post([Buffer.from([0xef, 0xbb, 0xbf]), '{"n":1}'])).toEqual({ status: 200, json: { body: { n: 1 } } });
    expect(await post([], { "transfer-encoding": "chunked" })).toEqual({ status: 200, json: { body: {} } });
  });

  it("refuses past 100 KiB, announced or not, and the connection answers after the body is read off", async () => {
    const big = `{"a":"${"x".repeat(110 * 1024)}"}`;
    expect(await post([big.slice(0, 50_000), big.slice(50_000)])).toEqual({ status: 413, json: { code: "payload_too_large" } });
    expect(await post([big], { "content-length": String(Buffer.byteLength(big)) })).toEqual({ status: 413, json: { code: "payload_too_large" } });
  });

  it("refuses text that is not JSON, bytes that are not UTF-8, nesting past the limit and numbers past the finite", async () => {
    expect(await post(["{nope"])).toEqual({ status: 400, json: { code: "invalid_json" } });
    expect(await post([Buffer.from([0x22, 0xc3, 0x28, 0x22])])).toEqual({ status: 400, json: { code: "invalid_json" } });
    expect(await post(["[[[[[1]]]]]"])).toEqual({ status: 400, json: { code: "invalid_json" } });
    expect(await post(['{"n":1e309}'])).toEqual({ status: 400, json: { code: "invalid_request" } });
  });

  it("inflates a compressed body and checks it as any other", async () => {
    expect(await post([gzipSync('{"title":"zipped"}')], { "content-encoding": "gzip" })).toEqual({ status: 200, json: { body: { title: "zipped" } } });
    expect(await post([gzipSync("[[[[[1]]]]]")], { "content-encoding": "gzip" })).toEqual({ status: 400, json: { code: "invalid_json" } });
  });
});

describe("the gateway's JSON body reader, once the body is in", () => {
  const later = (chunks: Array<string | Buffer>, headers: Record<string, string> = {}) => post(chunks, headers, "/later");
  const sized = (text: string | Buffer) => ({ "content-length": String(Buffer.byteLength(text)) });

  it("parses it, drops a leading byte order mark, and reads an empty chunked body as {}", async () => {
    expect(await later(['{"title":"a"}'], sized('{"title":"a"}'))).toEqual({ status: 200, json: { body: { title: "a" } } });
    expect(await later(['{"title":', '"a"}'])).toEqual({ status: 200, json: { body: { title: "a" } } });
    const marked = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"n":1}')]);
    expect(await later([marked], sized(marked))).toEqual({ status: 200, json: { body: { n: 1 } } });
    expect(await later([], { "transfer-encoding": "chunked" })).toEqual({ status: 200, json: { body: {} } });
  });

  it("refuses past 100 KiB, announced or not, and the connection answers after the body is read off", async () => {
    const big = `{"a":"${"x".repeat(110 * 1024)}"}`;
    expect(await later([big], sized(big))).toEqual({ status: 413, json: { code: "payload_too_large" } });
    expect(await later([big.slice(0, 50_000), big.slice(50_000)])).toEqual({ status: 413, json: { code: "payload_too_large" } });
  });

  it("refuses text that is not JSON, bytes that are not UTF-8, nesting past the limit and numbers past the finite", async () => {
    expect(await later(["{nope"], sized("{nope"))).toEqual({ status: 400, json: { code: "invalid_json" } });
    const notUtf8 = Buffer.from([0x22, 0xc3, 0x28, 0x22]);
    expect(await later([notUtf8], sized(notUtf8))).toEqual({ status: 400, json: { code: "invalid_json" } });
    expect(await later(["[[[[[1]]]]]"], sized("[[[[[1]]]]]"))).toEqual({ status: 400, json: { code: "invalid_json" } });
    expect(await later(['{"n":1e309}'], sized('{"n":1e309}'))).toEqual({ status: 400, json: { code: "invalid_request" } });
    const long = `{"n":[1,${"9".repeat(400)}]}`;
    expect(await later([long], sized(long))).toEqual({ status: 400, json: { code: "invalid_request" } });
  });
});
