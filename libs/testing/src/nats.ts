import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

/** Deletes the JetStream streams of a test namespace, so runs leave nothing on the server. */
export async function deleteNamespaceStreams(natsUrl: string, namespace: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const info of jsm.streams.list()) {
      if (info.config.name.startsWith(`${namespace}_`)) await jsm.streams.delete(info.config.name);
    }
  } finally {
    await nc.close();
  }
}
