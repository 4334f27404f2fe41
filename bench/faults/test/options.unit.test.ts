import { describe, expect, it } from "vitest";
import { parseOptions } from "../options.js";

const PROCESSES = ["meetings", "invites", "gateway"];

describe("parseOptions", () => {
  it("runs every fault by default, each process killed in turn, at 20 writes/s for 20 s", () => {
    expect(parseOptions([], PROCESSES)).toEqual({ faults: ["kill:meetings", "kill:invites", "kill:gateway", "nats", "postgres", "redis"], rate: 20, seconds: 20 });
  });

  it("takes the faults given, in their order, and one process's kill alone", () => {
    expect(parseOptions(["--faults", "redis,kill:invites,nats"], PROCESSES).faults).toEqual(["redis", "kill:invites", "nats"]);
    expect(parseOptions(["--faults=postgres,postgres"], PROCESSES).faults).toEqual(["postgres"]);
  });

  it("reads --rate, --seconds and --logs in either form", () => {
    expect(parseOptions(["--rate=50", "--seconds", "30", "--logs", "/tmp/l"], PROCESSES)).toMatchObject({ rate: 50, seconds: 30, logs: "/tmp/l" });
  });

  it("refuses what it does not know, naming it", () => {
    expect(() => parseOptions(["--faults", "disk"], PROCESSES)).toThrow(/unknown fault "disk"/);
    expect(() => parseOptions(["--faults", "kill:nobody"], PROCESSES)).toThrow(/kill:nobody/);
    expect(() => parseOptions(["--rate", "0"], PROCESSES)).toThrow(/--rate must be/);
    expect(() => parseOptions(["--seconds", "2.5"], PROCESSES)).toThrow(/--seconds must be/);
    expect(() => parseOptions(["--rate"], PROCESSES)).toThrow(/--rate needs a value/);
    expect(() => parseOptions(["--speed", "3"], PROCESSES)).toThrow(/unknown argument: --speed/);
  });
});
