import { Svcm } from "@nats-io/services";
import { connect } from "@nats-io/transport-node";

/**
 * The names of the services answering requests under `namespace` on the NATS
 * at `servers` (the services API's discovery, filtered on the subjects of
 * their endpoints); empty when none does. Two systems on one namespace would
 * answer each other's requests, so a new one asks this before it starts.
 */
export async function servicesAnsweringIn(servers: string, namespace: string, waitMs = 1_000): Promise<string[]> {
  const nc = await connect({ servers, name: "namespace-check" });
  try {
    const names = new Set<string>();
    const prefix = `${namespace}.`;
    // "stall": every instance answers at once; stop once no answer came for a moment.
    const answers = await new Svcm(nc).client({ strategy: "stall", maxWait: waitMs, stall: 250 }).info();
    try {
      for await (const info of answers) if (info.endpoints.some((e) => e.subject.startsWith(prefix))) names.add(info.name);
    } catch (err) {
      // No service at all on this server: nobody answers the discovery request.
      if (!(err instanceof Error && /no responders/i.test(err.message))) throw err;
    }
    return [...names].sort();
  } finally {
    await nc.close();
  }
}
