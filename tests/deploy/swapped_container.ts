/**
 * What swapping a DaemonSet's csi-provisioner container for this agent must
 * keep and what it must change, as assertions shared by the component tests:
 * the container's args, env and mounts carry over, the probes are the
 * agent's whole (one httpGet handler each) on the port the agent listens on,
 * and the rest of the pod is untouched.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_PORT_NAME, checkProbes, parseAgentArgs, type Probe } from "./daemonset_checks.ts";
import { DEPLOY_DIR, type K8sObject } from "./render.ts";

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: unknown[];
  volumeMounts?: unknown[];
  securityContext?: Record<string, unknown>;
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  [field: string]: unknown;
}

export type PodSpec = { containers: Container[]; [field: string]: unknown };

export function podSpec(daemonSet: K8sObject): PodSpec {
  return (daemonSet.spec as { template: { spec: PodSpec } }).template.spec;
}

export function container(daemonSet: K8sObject, name: string): Container {
  const found = podSpec(daemonSet).containers.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

/** The binary deploy/Dockerfile's image starts (its ENTRYPOINT). */
function imageEntrypoint(): string {
  const dockerfile = readFileSync(join(DEPLOY_DIR, "Dockerfile"), "utf8");
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile);
  ok(entrypoint, "deploy/Dockerfile has an ENTRYPOINT in exec form");
  return (JSON.parse(entrypoint[1]!) as string[])[0]!;
}

const ENDPOINT_FLAG = /^-{1,2}(http-endpoint|metrics-address)=/;

function withoutEndpoint(args: string[] | undefined): string[] {
  return (args ?? []).filter((arg) => !ENDPOINT_FLAG.test(arg));
}

/**
 * The swapped container of `after` against the same container in `before`;
 * returns the agent's parsed configuration for more checks.
 */
export function checkSwappedContainer(
  before: K8sObject,
  after: K8sObject,
  options: { container: string; image: string },
): Extract<ReturnType<typeof parseAgentArgs>, { kind: "run" }>["config"] {
  const old = container(before, options.container);
  const agent = container(after, options.container);
  for (const field of ["env", "volumeMounts"] as const) {
    deepStrictEqual(agent[field], old[field], `${options.container} ${field} kept`);
  }
  // Every arg but the HTTP endpoint is kept, in order.
  deepStrictEqual(withoutEndpoint(agent.args), withoutEndpoint(old.args));
  deepStrictEqual(agent.securityContext, { ...old.securityContext, runAsUser: 0 });
  strictEqual(agent.image, options.image);
  const [entrypoint, ...flags] = [...(agent.command ?? []), ...(agent.args ?? [])];
  strictEqual(entrypoint, imageEntrypoint(), "the command starts with the image's ENTRYPOINT");
  const parsed = parseAgentArgs(flags);
  ok(parsed.kind === "run", `the agent refuses its flags: ${JSON.stringify(parsed)}`);
  // The agent listens where its one port is, and both probes are there, whole.
  deepStrictEqual(agent.ports?.map(({ name }) => name), [AGENT_PORT_NAME]);
  strictEqual(parsed.config.httpEndpoint, `:${agent.ports[0]!.containerPort}`);
  checkProbes(agent);
  return parsed.config;
}

/** Every container but the swapped one, and the rest of the pod, as they were. */
export function checkRestUntouched(
  before: K8sObject,
  after: K8sObject,
  options: { container: string },
): void {
  const rest = (daemonSet: K8sObject) => {
    const { containers, serviceAccount, ...pod } = podSpec(daemonSet);
    return {
      // The post-renderer renames the deprecated field, which the API server
      // copies to serviceAccountName anyway.
      pod: { serviceAccountName: serviceAccount, ...pod },
      containers: containers.filter((candidate) => candidate.name !== options.container),
    };
  };
  deepStrictEqual(rest(after), rest(before));
  strictEqual(
    podSpec(after).containers.findIndex((candidate) => candidate.name === options.container),
    podSpec(before).containers.findIndex((candidate) => candidate.name === options.container),
  );
}
