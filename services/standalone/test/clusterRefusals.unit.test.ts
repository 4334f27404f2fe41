import { describe, expect, it } from "vitest";
import { clusterRefusals, type ClusterSurroundings } from "../src/domain/clusterRefusals.js";

const clear: ClusterSurroundings = { natsUrl: "nats://127.0.0.1:4222", namespace: "sched", answering: [], healthPortsTaken: [] };

describe("whether a local cluster may start", () => {
  it("when nothing answers on the namespace and every port is free, then it may", () => {
    expect(clusterRefusals(clear)).toEqual([]);
  });

  it("when services answer on the namespace, then it refuses, naming them, BUS_NAMESPACE and DATABASE_URL", () => {
    const [refusal, ...rest] = clusterRefusals({ ...clear, answering: ["accounts", "meetings"] });
    expect(rest).toEqual([]);
    expect(refusal).toContain("BUS_NAMESPACE=sched is in use on nats://127.0.0.1:4222: accounts, meetings already answer there");
    expect(refusal).toContain("its own database (DATABASE_URL)");
  });

  it("when the gateway's port, the dashboard's or health ports are taken, then it refuses once for each setting, naming the ports", () => {
    const refusals = clusterRefusals({
      ...clear,
      gatewayPortTaken: 8080,
      dashboardPortTaken: 8081,
      healthPortBase: 9464,
      healthPortsTaken: [
        { name: "accounts", port: 9464 },
        { name: "gateway", port: 9470 },
      ],
    });
    expect(refusals).toEqual([
      "PORT=8080 (the gateway's) is in use: set PORT to a free port.",
      "DASHBOARD_PORT=8081 (the dashboard's) is in use: set DASHBOARD_PORT to a free port.",
      "HEALTH_PORT=9464: 9464 (accounts), 9470 (gateway) in use: set HEALTH_PORT to the first of a free range, or leave it unset to have free ports chosen.",
    ]);
  });
});
