import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { join } from "node:path";
import ts from "typescript";
import { repoRoot } from "./support.js";

/** The identity every Kubernetes object carries. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

type Validating = new (data: unknown) => { validate(): void };

/**
 * The kinds the manifests use, with the kubernetes-models class (its JSON
 * schema, from the Kubernetes OpenAPI) and TypeScript interface of each. A
 * kind missing here fails the test rather than passing unchecked.
 */
const KINDS: Record<string, { model: Validating; module: string; type: string }> = {
  "v1/ConfigMap": { model: ConfigMap as Validating, module: "kubernetes-models/v1/ConfigMap", type: "IConfigMap" },
  "v1/Namespace": { model: Namespace as Validating, module: "kubernetes-models/v1/Namespace", type: "INamespace" },
  "v1/Secret": { model: Secret as Validating, module: "kubernetes-models/v1/Secret", type: "ISecret" },
  "v1/Service": { model: Service as Validating, module: "kubernetes-models/v1/Service", type: "IService" },
  "apps/v1/Deployment": { model: Deployment as Validating, module: "kubernetes-models/apps/v1/Deployment", type: "IDeployment" },
  "autoscaling/v2/HorizontalPodAutoscaler": {
    model: HorizontalPodAutoscaler as Validating,
    module: "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler",
    type: "IHorizontalPodAutoscaler",
  },
  "policy/v1/PodDisruptionBudget": {
    model: PodDisruptionBudget as Validating,
    module: "kubernetes-models/policy/v1/PodDisruptionBudget",
    type: "IPodDisruptionBudget",
  },
  "networking.k8s.io/v1/NetworkPolicy": {
    model: NetworkPolicy as Validating,
    module: "kubernetes-models/networking.k8s.io/v1/NetworkPolicy",
    type: "INetworkPolicy",
  },
};

function kindOf(object: KubeObject) {
  const known = KINDS[`${object.apiVersion}/${object.kind}`];
  if (!known) throw new Error(`no schema for ${object.apiVersion} ${object.kind}: add it to KINDS`);
  return known;
}

/**
 * Kustomize wraps long base64 values of generated Secrets over several lines;
 * the API server's base64 decoder skips line breaks, the schema's "byte"
 * format does not. Join them as the server reads them.
 */
function asServerReads(object: KubeObject): KubeObject {
  const data = (object as { data?: Record<string, string> }).data;
  if (object.kind !== "Secret" || !data) return object;
  return { ...object, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.replace(/\s+/g, "")])) } as KubeObject;
}

/** Validates one object against its Kubernetes JSON schema; returns the problem, if any. */
export function schemaError(object: KubeObject): string | undefined {
  try {
    new (kindOf(object).model)(asServerReads(object)).validate();
    return undefined;
  } catch (err) {
    return `${object.kind}/${object.metadata.name}: ${(err as Error).message}`;
  }
}

/**
 * The JSON schemas accept fields they do not define, so a misspelt field
 * (`readinesProbe`) would pass them and be dropped by the API server. Type
 * checking each object as an object literal of its generated interface
 * refuses any field the API does not have.
 */
export function unknownFieldErrors(objects: readonly KubeObject[]): string[] {
  const fileName = join(repoRoot, "deploy/test/rendered-manifests.ts");
  const imports = [...new Set(objects.map((o) => kindOf(o)))].map((k) => `import type { ${k.type} } from "${k.module}";`);
  const lines = [...imports];
  const owners: { firstLine: number; label: string }[] = [];
  for (const [i, object] of objects.entries()) {
    owners.push({ firstLine: lines.length, label: `${object.kind}/${object.metadata.name}` });
    lines.push(...`export const object${i}: ${kindOf(object).type} = ${JSON.stringify(object, null, 1)};`.split("\n"));
  }
  const source = lines.join("\n");

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts"],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName ? ts.createSourceFile(name, source, languageVersion) : getSourceFile.call(host, name, languageVersion, ...rest);
  host.fileExists = (name) => name === fileName || fileExists.call(host, name);
  host.readFile = (name) => (name === fileName ? source : readFile.call(host, name));

  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    if (d.file?.fileName !== fileName || d.start === undefined) return message;
    const line = d.file.getLineAndCharacterOfPosition(d.start).line;
    const owner = owners.findLast((o) => o.firstLine <= line);
    return `${owner?.label ?? "imports"}: ${message}`;
  });
}
