/**
 * What a rendered deployment (kustomize or Helm) must hold for the agent to
 * work and to be operated safely, as assertions shared by the manifest tests.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { parseConfig } from "../../lib/config/config.ts";
import { PROBE_INTERVAL_MS, PROBE_TIMEOUT_MS } from "../../lib/csi/driver_probe.ts";
import { PROBES } from "../../lib/http/health.ts";
import { HEARTBEAT_STALE_MS } from "../../lib/runtime/heartbeat.ts";
import { DRAIN_MARGIN_MS } from "../../lib/runtime/lifecycle.ts";
import { HOSTPATH_ARCHIVE } from "../cluster/peers.ts";
import { agentContainer, type K8sObject, theObject } from "./render.ts";

/**
 * The agent's port, in every rendering (deploy/, the component, the chart):
 * the PodMonitor selects pods by this name, so no other container may use it.
 */
export const AGENT_PORT_NAME = "cnp-metrics";

export interface Probe {
  httpGet: { path: string; port: string | number };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

/**
 * The probes are lib/http/health.ts PROBES, and those agree with the code:
 * the kubelet gives up on liveness only after the agent's own heartbeat limit
 * has passed, and a readiness period is no longer than the driver's Probe
 * interval, so /readyz is read at least as often as it can change.
 */
export function checkProbes(container: { livenessProbe?: Probe; readinessProbe?: Probe }): void {
  for (
    const [probe, expected] of [
      [container.livenessProbe, PROBES.liveness],
      [container.readinessProbe, PROBES.readiness],
    ] as const
  ) {
    deepStrictEqual(probe, {
      httpGet: { path: expected.path, port: AGENT_PORT_NAME },
      periodSeconds: expected.periodSeconds,
      timeoutSeconds: expected.timeoutSeconds,
      failureThreshold: expected.failureThreshold,
    });
  }
  const live = PROBES.liveness;
  ok(live.periodSeconds * live.failureThreshold * 1000 >= HEARTBEAT_STALE_MS);
  ok(PROBES.readiness.periodSeconds * 1000 <= PROBE_INTERVAL_MS);
  ok(PROBE_TIMEOUT_MS < PROBE_INTERVAL_MS);
}

interface AgentContainer {
  args: string[];
  env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: Probe;
  readinessProbe: Probe;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string }[];
}

/** The agent's flags, parsed by the agent's own parser with downward-API-like values. */
export function parseAgentArgs(args: string[]): ReturnType<typeof parseConfig> {
  return parseConfig(args, { NODE_NAME: "node-a", NAMESPACE: "ns", POD_NAME: "pod-a" }, {
    program: "csi-node-provisioner",
  });
}

/**
 * Everything the DaemonSet and its agent container must have, with no driver
 * in the pod (the default install) or the example hostpath driver; returns
 * the agent container.
 */
export function checkDaemonSet(objects: K8sObject[], driver: "none" | "example"): AgentContainer {
  const daemonSet = theObject(objects, "DaemonSet");
  const spec = daemonSet.spec as { template: { spec: Record<string, unknown> } };
  const pod = spec.template.spec;
  const agent = agentContainer(daemonSet) as unknown as AgentContainer;
  strictEqual(pod.priorityClassName, "system-node-critical");
  // Not every node, control plane included, unless the operator says so.
  strictEqual(pod.tolerations, undefined);
  deepStrictEqual((daemonSet.spec as { updateStrategy: unknown }).updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: "10%" },
  });
  strictEqual((daemonSet.spec as { revisionHistoryLimit: number }).revisionHistoryLimit, 10);
  const fieldPaths = Object.fromEntries(
    agent.env.map((variable) => [variable.name, variable.valueFrom?.fieldRef?.fieldPath]),
  );
  deepStrictEqual(fieldPaths, {
    NODE_NAME: "spec.nodeName",
    NAMESPACE: "metadata.namespace",
    POD_NAME: "metadata.name",
  });
  const parsed = parseAgentArgs(agent.args);
  ok(parsed.kind === "run", `the agent refuses its flags: ${JSON.stringify(parsed)}`);
  const config = parsed.config;
  ok(config.enableCapacity, "capacity is published");
  // SIGTERM: the agent drains CSI calls for --timeout plus a margin, then closes.
  const grace = pod.terminationGracePeriodSeconds as number;
  ok(grace * 1000 >= config.timeoutMs + DRAIN_MARGIN_MS + 5000, `grace period ${grace} s`);
  // The probes and the metrics port are the agent's --http-endpoint.
  const port = agent.ports.find((candidate) => candidate.name === AGENT_PORT_NAME);
  strictEqual(config.httpEndpoint, `:${port?.containerPort}`);
  checkProbes(agent);
  ok(agent.resources.requests?.cpu && agent.resources.requests.memory, "requests");
  ok(agent.resources.limits?.memory, "a memory limit");
  checkAgentSecurityContext(agent.securityContext);
  // The CSI socket the agent dials is the driver's socket directory.
  strictEqual(config.csiAddress, "/csi/csi.sock");
  ok(agent.volumeMounts.some((mount) => mount.name === "socket-dir" && mount.mountPath === "/csi"));
  checkJournalOnHostPath(daemonSet, {
    mounts: agent.volumeMounts,
    journalPath: config.journalPath,
  });
  if (driver === "none") checkAgentAlone(daemonSet);
  else checkDriverMatches(objects, daemonSet);
  return agent;
}

/**
 * The default install: one container, the agent, and the existing driver's
 * socket directory from the host, which must exist (no DirectoryOrCreate
 * that would hide a wrong path behind an agent dialing an empty directory).
 */
function checkAgentAlone(daemonSet: K8sObject): void {
  const pod = (daemonSet.spec as {
    template: {
      spec: {
        containers: { name: string }[];
        volumes: { name: string; hostPath?: { path: string; type: string } }[];
      };
    };
  }).template.spec;
  deepStrictEqual(pod.containers.map((container) => container.name), ["csi-node-provisioner"]);
  const socketDir = pod.volumes.find((volume) => volume.name === "socket-dir");
  strictEqual(socketDir?.hostPath?.type, "Directory");
  deepStrictEqual(pod.volumes.map((volume) => volume.name).sort(), ["socket-dir", "tmp"]);
}

/**
 * The intent journal is on the node's disk: the mount that holds its file
 * comes from a hostPath volume (not the image's read-only root, not an
 * emptyDir that goes with the pod). Returns the host path of the journal.
 */
export function checkJournalOnHostPath(
  daemonSet: K8sObject,
  agent: { mounts: { name: string; mountPath: string }[]; journalPath: string },
): string {
  const volumes = (daemonSet.spec as {
    template: { spec: { volumes?: { name: string; hostPath?: { path: string } }[] } };
  }).template.spec.volumes ?? [];
  const holding = agent.mounts
    .filter((mount) => agent.journalPath.startsWith(`${mount.mountPath.replace(/\/$/, "")}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  ok(holding, `no volume mount holds the journal ${agent.journalPath}`);
  const hostPath = volumes.find((volume) => volume.name === holding.name)?.hostPath?.path;
  ok(hostPath, `the journal ${agent.journalPath} is on volume ${holding.name}, not a hostPath`);
  return `${hostPath.replace(/\/$/, "")}${agent.journalPath.slice(holding.mountPath.length)}`;
}

/** Restricted, except the user (see deploy/daemonset.yaml: the socket is root's). */
function checkAgentSecurityContext(context: Record<string, unknown>): void {
  strictEqual(context.allowPrivilegeEscalation, false);
  strictEqual(context.readOnlyRootFilesystem, true);
  deepStrictEqual(context.capabilities, { drop: ["ALL"] });
  deepStrictEqual(context.seccompProfile, { type: "RuntimeDefault" });
  strictEqual(context.privileged, undefined);
}

/**
 * The example driver is the hostpath plugin the tests build, its name is the
 * CSIDriver's and the classes' provisioner, the classes wait for the first
 * consumer, and the CSIDriver asks the scheduler to use the published capacity.
 */
function checkDriverMatches(objects: K8sObject[], daemonSet: K8sObject): void {
  const driver = theObject(objects, "CSIDriver");
  strictEqual((driver.spec as { storageCapacity: boolean }).storageCapacity, true);
  const containers = (daemonSet.spec as {
    template: { spec: { containers: { name: string; image: string; args: string[] }[] } };
  }).template.spec.containers;
  const hostpath = containers.find((container) => container.name === "hostpath");
  strictEqual(
    hostpath?.image,
    `registry.k8s.io/sig-storage/hostpathplugin:${HOSTPATH_ARCHIVE.version}`,
  );
  ok(hostpath?.args.includes(`--drivername=${driver.metadata.name}`), "driver name");
  const classes = objects.filter((object) => object.kind === "StorageClass");
  ok(classes.length >= 1, "example StorageClasses");
  for (const storageClass of classes) {
    strictEqual(storageClass.provisioner, driver.metadata.name);
    strictEqual(storageClass.volumeBindingMode, "WaitForFirstConsumer");
  }
}

/** The ServiceAccount the pods run as is the subject of both bindings. */
export function checkBindings(objects: K8sObject[]): void {
  const daemonSet = theObject(objects, "DaemonSet");
  const account = (daemonSet.spec as { template: { spec: { serviceAccountName: string } } })
    .template.spec.serviceAccountName;
  theObject(objects, "ServiceAccount", account);
  for (const kind of ["ClusterRoleBinding", "RoleBinding"]) {
    const binding = theObject(objects, kind) as K8sObject & {
      subjects: { kind: string; name: string; namespace: string }[];
      roleRef: { kind: string; name: string };
    };
    deepStrictEqual(binding.subjects, [{
      kind: "ServiceAccount",
      name: account,
      namespace: daemonSet.metadata.namespace,
    }]);
    theObject(objects, binding.roleRef.kind, binding.roleRef.name);
  }
}
