import { createLogger } from "@sched/logging";
import { contactsCreate, contactsDelete, contactsVisibility } from "@sched/proto";
import { Svcm } from "@nats-io/services";
import { connect } from "@nats-io/transport-node";
import { NATS_URL, uniqueSuffix } from "@sched/testing";
import { expect, it } from "vitest";
import { bind, connectNatsBus } from "../src/index.js";
import { endpointMetadata } from "../src/endpointMetadata.js";

it("shows each endpoint's declared kind and a route's answers in the services API's info (nats micro info)", async () => {
  const namespace = `m${uniqueSuffix()}`;
  const bus = await connectNatsBus({ servers: NATS_URL, namespace, name: "metadata-test", logger: createLogger({ name: "metadata-test", level: "silent" }) });
  const name = `contract-${uniqueSuffix()}`;
  await bus.serve({ name, version: "1.0.0" }, [
    bind(contactsCreate, async () => {
      throw new Error("not called");
    }),
    bind(contactsDelete, async () => ({ status: 204 })),
    bind(contactsVisibility, async () => ({ visibleUserIds: [] })),
  ]);
  const nc = await connect({ servers: NATS_URL, name: "metadata-test-client" });
  try {
    const infos = await new Svcm(nc).client({ strategy: "stall", maxWait: 5_000, stall: 500 }).info(name);
    const endpoints = [];
    for await (const info of infos) endpoints.push(...info.endpoints.map((e) => [e.subject, e.metadata]));
    expect(endpoints.sort()).toEqual(
      [
        [`${namespace}.${contactsCreate.subject}`, { kind: "route", replies: "201+body" }],
        [`${namespace}.${contactsDelete.subject}`, { kind: "route", replies: "204" }],
        [`${namespace}.${contactsVisibility.subject}`, { kind: "request" }],
      ].sort(),
    );
    expect(endpointMetadata(contactsVisibility)).toEqual({ kind: "request" });
  } finally {
    await nc.close();
    await bus.close();
  }
});
