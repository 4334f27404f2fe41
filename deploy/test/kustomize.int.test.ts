import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { schemaError, unknownFieldErrors, type KubeObject } from "./kubernetesSchemas.js";
import { HEALTH_PORT, deployedProcesses, isReadBy, parseDockerfile, parseYamlStream, readRepoFile, readYaml, repoRoot, variablesRequiredBy } from "./support.js";

type Labels = Record<string, string>;
interface Selector {
  matchLabels?: Labels;
  matchExpressions?: unknown[];
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string; optional?: boolean }; fieldRef?: unknown };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
    runAsNonRoot?: boolean;
  };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    selector: Selector;
    template: {
      metadata: { labels: Labels };
      spec: {
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
        containers: Container[];
        volumes?: { name: string; emptyDir?: object }[];
        automountServiceAccountToken?: boolean;
        terminationGracePeriodSeconds?: number;
      };
    };
  };
}
interface NetworkPeer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string };
}
interface NetworkPolicyRule {
  ports?: { port?: number; protocol?: string }[];
  from?: NetworkPeer[];
  to?: NetworkPeer[];
}
interface NetworkPolicy extends KubeObject {
  spec: { podSelector: Selector; policyTypes: string[]; ingress?: NetworkPolicyRule[]; egress?: NetworkPolicyRule[] };
}

/** Renders an overlay as the cluster would receive it. */
/** Renders a kustomization under k8s/ (an overlay's name, or a path such as "dependencies"). */
function render(overlay: string): KubeObject[] {
  const dir = `${repoRoot}/k8s/${overlay.includes("/") || overlay === "dependencies" ? overlay : `overlays/${overlay}`}`;
  const attempts: [string, string[]][] = [
    ["kubectl", ["kustomize", dir]],
    ["kustomize", ["build", dir]],
  ];
  const failures: string[] = [];
  for (const [command, args] of attempts) {
    try {
      return parseYamlStream(execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as KubeObject[];
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      failures.push(e.code === "ENOENT" ? `${command}: not installed` : `${command}: ${e.stderr || e.message}`);
      if (e.code !== "ENOENT") break;
    }
  }
  throw new Error(`cannot render k8s/overlays/${overlay} (kubectl ≥ 1.27 or kustomize 5 is needed):\n${failures.join("\n")}`);
}

function selects(selector: Selector, labels: Labels): boolean {
  if (selector.matchExpressions?.length) throw new Error("matchExpressions are not evaluated by this test");
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

const portMatches = (rule: NetworkPolicyRule, port: number) => !rule.ports?.length || rule.ports.some((p) => p.port === undefined || p.port === port);

/** Where a connection comes from or goes to, as the policies see it. */
type Peer = { pod: Labels; namespace: Labels } | "internet";

function peerMatches(peers: NetworkPeer[] | undefined, peer: Peer, policyNamespace: string | undefined): boolean {
  if (!peers?.length) return true;
  return peers.some((p) => {
    if (peer === "internet") return p.ipBlock !== undefined;
    if (p.ipBlock) return false;
    // A pod selector without a namespace selector means the policy's own namespace.
    const namespaceMatches = p.namespaceSelector
      ? selects(p.namespaceSelector, peer.namespace)
      : peer.namespace["kubernetes.io/metadata.name"] === policyNamespace;
    return namespaceMatches && (p.podSelector === undefined || selects(p.podSelector, peer.pod));
  });
}

/** Whether the policies let `peer` open a connection to `pod` on `port`, or `pod` to `peer`. */
function allowed(policies: NetworkPolicy[], direction: "Ingress" | "Egress", pod: Labels, peer: Peer, port: number): boolean {
  const applying = policies.filter((p) => p.spec.policyTypes.includes(direction) && selects(p.spec.podSelector, pod));
  if (applying.length === 0) return true;
  return applying.some((p) =>
    (direction === "Ingress" ? p.spec.ingress : p.spec.egress)?.some(
      (rule) => portMatches(rule, port) && peerMatches(direction === "Ingress" ? rule.from : rule.to, peer, p.metadata.namespace),
    ),
  );
}

const dockerUser = (() => {
  const users = parseDockerfile(readRepoFile("Dockerfile"))
    .stages.flatMap((s) => s.instructions)
    .filter((i) => i.keyword === "USER");
  return Number(users.at(-1)?.args.split(":")[0]);
})();

const chartPod = (name: string): Peer => ({ pod: { "app.kubernetes.io/name": name }, namespace: { "kubernetes.io/metadata.name": "sched-data" } });
/** The pods CloudNativePG runs for the cluster of k8s/dependencies carry its name in this label. */
const POSTGRES: Peer = { pod: { "cnpg.io/cluster": "sched-postgres", "cnpg.io/instanceRole": "primary" }, namespace: { "kubernetes.io/metadata.name": "sched-data" } };
const DNS: Peer = { pod: { "k8s-app": "kube-dns" }, namespace: { "kubernetes.io/metadata.name": "kube-system" } };
const ANY_POD: Peer = { pod: {}, namespace: { "kubernetes.io/metadata.name": "elsewhere" } };
const PROMETHEUS: Peer = { pod: { "app.kubernetes.io/name": "prometheus" }, namespace: { "kubernetes.io/metadata.name": "monitoring" } };

/** kubectl or kustomize on the PATH; in CI (CI=true) a missing renderer is a failure, not a skip. */
function rendererAvailable(): boolean {
  for (const command of ["kubectl", "kustomize"]) {
    try {
      execFileSync(command, ["version", "--client"], { stdio: "ignore" });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return true;
    }
  }
  if (process.env.CI === "true") throw new Error("the k8s manifests must be rendered in CI, but neither kubectl nor kustomize is installed");
  console.warn("skipping the k8s manifest checks: neither kubectl (≥ 1.27) nor kustomize 5 is installed");
  return false;
}

const canRender = rendererAvailable();

describe.skipIf(!canRender).each(["dev", "prod"])("k8s/overlays/%s", (overlay) => {
  const rendered = canRender ? render(overlay) : [];
  // Custom resources (CloudNativePG's Cluster) have no schema among Kubernetes's own: checked by hand below.
  const isCustom = (o: KubeObject) => o.apiVersion.startsWith("postgresql.cnpg.io/");
  const objects = rendered.filter((o) => !isCustom(o));
  const customResources = rendered.filter(isCustom);
  const ofKind = <T extends KubeObject>(kind: string) => objects.filter((o) => o.kind === kind) as T[];
  const named = <T extends KubeObject>(kind: string, name: string) => ofKind<T>(kind).find((o) => o.metadata.name === name);
  const deployments = ofKind<Deployment>("Deployment");
  const policies = ofKind<NetworkPolicy>("NetworkPolicy");
  const podLabels = (name: string) => named<Deployment>("Deployment", name)!.spec.template.metadata.labels;

  it("renders every object valid against the Kubernetes JSON schemas", () => {
    expect(objects.length).toBeGreaterThan(deployedProcesses.length * 4);
    expect(objects.map(schemaError).filter(Boolean)).toEqual([]);
  });

  it("uses no field the Kubernetes API does not define", () => {
    expect(unknownFieldErrors(objects)).toEqual([]);
  }, 60_000);

  it("puts every namespaced object in the overlay's namespace, which enforces the restricted Pod Security Standard", () => {
    const [namespace, ...others] = ofKind("Namespace");
    expect(others).toEqual([]);
    expect(namespace!.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    for (const o of objects.filter((x) => x.kind !== "Namespace")) expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(namespace!.metadata.name);
  });

  it.each(deployedProcesses)("runs %s as a Deployment with a Service, an autoscaler and a disruption budget", (name) => {
    const deployment = named<Deployment>("Deployment", name);
    expect(deployment, `no Deployment ${name}`).toBeDefined();
    const labels = deployment!.spec.template.metadata.labels;
    expect(selects(deployment!.spec.selector, labels)).toBe(true);
    expect(deployment!.spec.replicas, "the autoscaler owns the replica count").toBeUndefined();
    expect(deployment!.spec.template.spec.containers[0]!.image).toMatch(new RegExp(`/?${name}:[\\w.-]+$`));
    expect(deployment!.spec.template.spec.containers[0]!.image).not.toMatch(/:latest$/);

    const service = named<KubeObject & { spec: { selector: Labels } }>("Service", name);
    expect(selects({ matchLabels: service!.spec.selector }, labels)).toBe(true);

    const hpa = named<KubeObject & { spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number } }>("HorizontalPodAutoscaler", name);
    expect(hpa!.apiVersion).toBe("autoscaling/v2");
    expect(hpa!.spec.scaleTargetRef).toMatchObject({ kind: "Deployment", name });
    expect(hpa!.spec.minReplicas).toBe(overlay === "prod" ? 2 : 1);
    expect(hpa!.spec.maxReplicas).toBeGreaterThanOrEqual(hpa!.spec.minReplicas);

    const pdb = named<KubeObject & { spec: { selector: Selector; maxUnavailable?: number } }>("PodDisruptionBudget", name);
    expect(selects(pdb!.spec.selector, labels)).toBe(true);
    expect(pdb!.spec.maxUnavailable).toBe(1);
  });

  it.each(deployedProcesses)("hardens %s: non-root, read-only, no capabilities, RuntimeDefault seccomp", (name) => {
    const pod = named<Deployment>("Deployment", name)!.spec.template.spec;
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).toBe(dockerUser);
    expect(pod.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const container of pod.containers) {
      expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
      const tmp = container.volumeMounts?.find((m) => m.mountPath === "/tmp");
      expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, "/tmp is the only writable place").toBeDefined();
    }
  });

  it.each(deployedProcesses)("probes %s on the health port and bounds its resources", (name) => {
    const container = named<Deployment>("Deployment", name)!.spec.template.spec.containers[0]!;
    const healthPort = container.ports?.find((p) => p.name === "health");
    expect(healthPort?.containerPort).toBe(HEALTH_PORT);
    expect(container.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "health" });
    expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(container.startupProbe?.httpGet?.port).toBe("health");
    for (const bound of ["requests", "limits"] as const) {
      expect(container.resources?.[bound]?.cpu, `${bound}.cpu`).toBeDefined();
      expect(container.resources?.[bound]?.memory, `${bound}.memory`).toBeDefined();
    }
  });

  it.each(deployedProcesses)("configures %s with variables it reads, from ConfigMaps and Secrets that exist", (name) => {
    const container = named<Deployment>("Deployment", name)!.spec.template.spec.containers[0]!;
    const env: Record<string, string> = {};
    for (const source of container.envFrom ?? []) {
      const configMap = named<KubeObject & { data: Record<string, string> }>("ConfigMap", source.configMapRef?.name ?? "");
      expect(configMap, `ConfigMap ${source.configMapRef?.name}`).toBeDefined();
      Object.assign(env, configMap!.data);
    }
    const referenced = new Set((container.env ?? []).flatMap((v) => [...(v.value ?? "").matchAll(/\$\((\w+)\)/g)].map((m) => m[1]!)));
    for (const variable of container.env ?? []) {
      if (!referenced.has(variable.name)) env[variable.name] = variable.value ?? "(from a reference)";
      const secretRef = variable.valueFrom?.secretKeyRef;
      // An optional key (ai-ranking's language model) may be missing: the variable is then unset.
      if (secretRef && !secretRef.optional) expect(secretKeys(secretRef.name), `Secret ${secretRef.name}`).toContain(secretRef.key);
    }
    for (const variable of Object.keys(env)) expect(isReadBy(name, variable), `${name} does not read ${variable}`).toBe(true);
    for (const variable of variablesRequiredBy(name)) expect(env, `${name} needs ${variable}`).toHaveProperty([variable]);
    expect(env.HEALTH_PORT).toBe(String(HEALTH_PORT));
    expect(env.OTEL_SERVICE_NAME).toBe(name);
    expect(env).toHaveProperty(name === "gateway" ? "ADMIN_TOKEN" : "DATABASE_URL");
  });

  /** The keys of a Secret: rendered in dev; in prod created outside git, as the example shows. */
  function secretKeys(name: string): string[] {
    const rendered = named<KubeObject & { data?: Labels; stringData?: Labels }>("Secret", name);
    if (rendered) return Object.keys({ ...rendered.data, ...rendered.stringData });
    expect(overlay, `Secret ${name} is neither rendered nor documented`).toBe("prod");
    const example = readYaml("k8s/overlays/prod/sched-secrets.example.yaml") as { metadata: { name: string }; stringData: Labels };
    expect(example.metadata.name).toBe(name);
    return Object.keys(example.stringData);
  }

  if (overlay === "prod") {
    it("renders no Secret: production secrets never come from git", () => {
      expect(ofKind("Secret")).toEqual([]);
    });
  }

  it("isolates every pod of the product in both directions by default", () => {
    for (const deployment of deployments.filter((d) => d.spec.template.metadata.labels["app.kubernetes.io/part-of"] === "scheduling-api")) {
      const labels = deployment.spec.template.metadata.labels;
      const denyAll = policies.find((p) => selects(p.spec.podSelector, labels) && !p.spec.ingress?.length && !p.spec.egress?.length);
      expect(denyAll?.spec.policyTypes.sort(), deployment.metadata.name).toEqual(["Egress", "Ingress"]);
    }
  });

  it("lets only the gateway, and the dashboard's pages, take traffic from outside", () => {
    expect(allowed(policies, "Ingress", podLabels("gateway"), ANY_POD, 8080)).toBe(true);
    expect(allowed(policies, "Ingress", podLabels("gateway"), "internet", 8080)).toBe(true);
    expect(allowed(policies, "Ingress", podLabels("dashboard"), "internet", 8081)).toBe(true);
    for (const name of deployedProcesses) {
      for (const port of [HEALTH_PORT, 8080, 8081, 80]) {
        if ((name === "gateway" && port === 8080) || (name === "dashboard" && port === 8081)) continue;
        expect(allowed(policies, "Ingress", podLabels(name), ANY_POD, port), `${name}:${port} from another namespace`).toBe(false);
        expect(allowed(policies, "Ingress", podLabels(name), "internet", port), `${name}:${port} from outside`).toBe(false);
        const neighbour = { pod: podLabels("gateway"), namespace: { "kubernetes.io/metadata.name": named<Deployment>("Deployment", "gateway")!.metadata.namespace! } };
        if (name !== "gateway") expect(allowed(policies, "Ingress", podLabels(name), neighbour, port), `${name}:${port} from the gateway`).toBe(false);
      }
      expect(allowed(policies, "Ingress", podLabels(name), PROMETHEUS, HEALTH_PORT), `${name} metrics`).toBe(true);
    }
  });

  it("lets each pod reach only what it uses: DNS, NATS and the collector; Postgres for services, Valkey for the gateway", () => {
    for (const name of deployedProcesses) {
      const pod = podLabels(name);
      expect(allowed(policies, "Egress", pod, DNS, 53), `${name} → DNS`).toBe(true);
      expect(allowed(policies, "Egress", pod, chartPod("nats"), 4222), `${name} → NATS`).toBe(true);
      expect(allowed(policies, "Egress", pod, chartPod("opentelemetry-collector"), 4318), `${name} → collector`).toBe(true);
      expect(allowed(policies, "Egress", pod, POSTGRES, 5432), `${name} → Postgres`).toBe(name !== "gateway");
      expect(allowed(policies, "Egress", pod, chartPod("valkey"), 6379), `${name} → Valkey`).toBe(name === "gateway");
      expect(allowed(policies, "Egress", pod, chartPod("nats"), 5432), `${name} → NATS on another port`).toBe(false);
      expect(allowed(policies, "Egress", pod, ANY_POD, 443), `${name} → any pod`).toBe(false);
      expect(allowed(policies, "Egress", pod, "internet", 443), `${name} → internet`).toBe(name === "ai-ranking" || name === "invites" || name === "webhooks");
      // invites sends invitations, the dashboard sign-in links.
      expect(allowed(policies, "Egress", pod, "internet", 587), `${name} → SMTP`).toBe(name === "invites" || name === "dashboard");
    }
  });

  it(overlay === "dev" ? "lets invites and the dashboard, and only those, hand e-mail to the overlay's own Mailpit" : "runs no Mailpit", () => {
    const mailpit = named<Deployment>("Deployment", "mailpit");
    if (overlay !== "dev") {
      expect(mailpit).toBeUndefined();
      return;
    }
    const namespace = mailpit!.metadata.namespace!;
    const peer: Peer = { pod: mailpit!.spec.template.metadata.labels, namespace: { "kubernetes.io/metadata.name": namespace } };
    const secret = ofKind<KubeObject & { data: Labels }>("Secret").find((o) => o.metadata.name.startsWith("sched-secrets"))!;
    const smtpUrl = secret.data.SMTP_URL!;
    expect(Buffer.from(smtpUrl, "base64").toString()).toBe(`smtp://mailpit.${namespace}.svc.cluster.local:1025`);
    for (const name of deployedProcesses) expect(allowed(policies, "Egress", podLabels(name), peer, 1025), `${name} → Mailpit`).toBe(name === "invites" || name === "dashboard");
    expect(allowed(policies, "Egress", podLabels("invites"), peer, 8025), "invites → Mailpit's web UI").toBe(false);
    const pod = mailpit!.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.containers[0]!.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
  });

  if (overlay === "dev") {
    it("brings its own Postgres (one CloudNativePG instance, the owner's password known) and Valkey, reachable at the Secret's addresses", () => {
      const [cluster, ...others] = customResources as (KubeObject & { spec: { instances: number; bootstrap: { initdb: { database: string; owner: string; secret?: { name: string } } } } })[];
      expect(others).toEqual([]);
      expect(cluster).toMatchObject({ apiVersion: "postgresql.cnpg.io/v1", kind: "Cluster", metadata: { name: "sched-postgres" } });
      expect(cluster!.spec.instances).toBe(1);
      const { database, owner, secret } = cluster!.spec.bootstrap.initdb;
      const credentials = named<KubeObject & { type: string; data: Labels }>("Secret", secret!.name)!;
      expect(credentials.type).toBe("kubernetes.io/basic-auth");
      const namespace = cluster!.metadata.namespace!;
      const secrets = ofKind<KubeObject & { data: Labels }>("Secret").find((o) => o.metadata.name.startsWith("sched-secrets"))!;
      const decoded = (value: string | undefined) => Buffer.from(value ?? "", "base64").toString();
      const databaseUrl = new URL(decoded(secrets.data.DATABASE_URL));
      expect([databaseUrl.hostname, databaseUrl.pathname, databaseUrl.username, databaseUrl.password]).toEqual([
        `sched-postgres-rw.${namespace}.svc.cluster.local`,
        `/${database}`,
        owner,
        decoded(credentials.data.password),
      ]);
      const valkey = named<Deployment>("Deployment", "valkey")!;
      const redisUrl = new URL(decoded(secrets.data.REDIS_URL));
      expect(redisUrl.hostname).toBe(`valkey.${namespace}.svc.cluster.local`);
      const valkeySecret = ofKind<KubeObject & { data: Labels }>("Secret").find((o) => o.metadata.name.startsWith("sched-valkey"))!;
      expect(redisUrl.password).toBe(decoded(valkeySecret.data.password));
      expect(valkey.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      const peer = (labels: Labels): Peer => ({ pod: labels, namespace: { "kubernetes.io/metadata.name": namespace } });
      expect(allowed(policies, "Egress", podLabels("gateway"), peer(valkey.spec.template.metadata.labels), 6379)).toBe(true);
      expect(allowed(policies, "Egress", podLabels("meetings"), peer({ "cnpg.io/cluster": cluster!.metadata.name }), 5432)).toBe(true);
    });
  }
});

describe.skipIf(!canRender)("k8s/dependencies", () => {
  const objects = canRender ? render("dependencies") : [];

  it("runs Postgres as a CloudNativePG cluster of three instances and Valkey, in the namespace the base's addresses use", () => {
    expect(objects.map((o) => [o.kind, o.metadata.name, o.metadata.namespace]).sort()).toEqual([
      ["Cluster", "sched-postgres", "sched-data"],
      ["Deployment", "valkey", "sched-data"],
      ["Service", "valkey", "sched-data"],
    ]);
    const cluster = objects.find((o) => o.kind === "Cluster") as KubeObject & { spec: { instances: number; bootstrap: { initdb: { database: string; owner: string } } } };
    expect(cluster.apiVersion).toBe("postgresql.cnpg.io/v1");
    expect(cluster.spec.instances).toBe(3);
    expect(cluster.spec.bootstrap.initdb).toEqual({ database: "sched", owner: "sched" });
    expect(objects.filter((o) => o.kind !== "Cluster").map(schemaError).filter(Boolean)).toEqual([]);
  });
});
