/** What `npm run cluster` found around it before starting anything. */
export interface ClusterSurroundings {
  natsUrl: string;
  namespace: string;
  /** Services already answering requests under the namespace on that NATS. */
  answering: string[];
  /** The gateway's PORT, when something listens on it already. */
  gatewayPortTaken?: number;
  /** The dashboard's DASHBOARD_PORT, when something listens on it already. */
  dashboardPortTaken?: number;
  /** HEALTH_PORT as given, and the ports of that range something listens on, with the process each was for. */
  healthPortBase?: number;
  healthPortsTaken: { name: string; port: number }[];
}

/**
 * Why a local cluster must not start here, one sentence each naming the
 * setting to change; empty when it may. Two clusters on one namespace would
 * answer each other's requests, and a process whose port is taken would stop
 * the whole cluster a moment after it started.
 */
export function clusterRefusals(s: ClusterSurroundings): string[] {
  const refusals: string[] = [];
  if (s.answering.length > 0) {
    refusals.push(
      `BUS_NAMESPACE=${s.namespace} is in use on ${s.natsUrl}: ${s.answering.join(", ")} already answer there (another npm run cluster?). ` +
        "Stop that one, or give this cluster its own BUS_NAMESPACE and its own database (DATABASE_URL): the services' tables are not namespaced.",
    );
  }
  if (s.gatewayPortTaken !== undefined) refusals.push(`PORT=${s.gatewayPortTaken} (the gateway's) is in use: set PORT to a free port.`);
  if (s.dashboardPortTaken !== undefined) refusals.push(`DASHBOARD_PORT=${s.dashboardPortTaken} (the dashboard's) is in use: set DASHBOARD_PORT to a free port.`);
  if (s.healthPortsTaken.length > 0) {
    const taken = s.healthPortsTaken.map((t) => `${t.port} (${t.name})`).join(", ");
    refusals.push(`HEALTH_PORT=${s.healthPortBase}: ${taken} in use: set HEALTH_PORT to the first of a free range, or leave it unset to have free ports chosen.`);
  }
  return refusals;
}
