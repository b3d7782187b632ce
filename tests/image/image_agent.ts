/**
 * Starting the image's entrypoint as deploy/'s DaemonSet pod on a node of
 * the test cluster would be started by a container runtime: the pod spec's
 * arguments, environment, volumes and securityContext, the image's
 * entrypoint and user, the kubelet's ServiceAccount mount and service
 * variables (see pod_container.ts for what is and is not done).
 */

import { dirname, join } from "node:path";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { type ManagedProcess, ProcessGroup } from "../cluster/process.ts";
import { agentContainer, type K8sObject, theObject } from "../deploy/render.ts";
import type { MountedImage } from "./image_fixture.ts";
import {
  containerEnv,
  containerScript,
  type PodFacts,
  securitySettings,
  SERVICE_ACCOUNT_DIR,
  volumeMounts,
} from "./pod_container.ts";

/** The files the kubelet projects for the pod's ServiceAccount: token, CA, namespace. */
async function serviceAccountFiles(
  cluster: RunningCluster,
  options: { namespace: string; serviceAccount: string; dir: string },
): Promise<void> {
  const request = await cluster.admin.core.createNamespacedServiceAccountToken({
    name: options.serviceAccount,
    namespace: options.namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  await Deno.mkdir(options.dir, { recursive: true });
  await Deno.writeTextFile(join(options.dir, "token"), request.status?.token ?? "");
  await Deno.writeTextFile(join(options.dir, "ca.crt"), cluster.caPem);
  await Deno.writeTextFile(join(options.dir, "namespace"), options.namespace);
}

export interface ImageAgent extends AsyncDisposable {
  process: ManagedProcess;
  /** http://127.0.0.1:PORT of the agent's --http-endpoint. */
  url: string;
  /** What the agent wrote to /dev/termination-log. */
  terminationMessage(): Promise<string>;
}

function imageUser(user: string): { uid: number; gid: number } {
  const [uid, gid] = user.split(":").map(Number);
  if (!Number.isInteger(uid)) throw new Error(`the image's user ${user} is not numeric`);
  return { uid: uid!, gid: gid ?? 0 };
}

/** The image configuration's `Env` ("KEY=value" entries), which a runtime starts the container with. */
export function imageEnv(config: { Env?: string[] }): Record<string, string> {
  return Object.fromEntries((config.Env ?? []).map((entry) => {
    const at = entry.indexOf("=");
    return at < 0 ? [entry, ""] : [entry.slice(0, at), entry.slice(at + 1)];
  }));
}

/** Runs the mounted image's entrypoint as deploy/'s DaemonSet pod `pod` on its node. */
export async function startImageAgent(
  cluster: RunningCluster,
  options: { image: MountedImage; objects: K8sObject[]; pod: PodFacts; httpPort: number },
): Promise<ImageAgent> {
  const daemonSet = theObject(options.objects, "DaemonSet");
  const container = agentContainer(daemonSet);
  const podSpec = (daemonSet.spec as { template: { spec: { serviceAccountName: string } } })
    .template.spec;
  const dir = join(cluster.dir, "image-agent", options.pod.nodeName);
  const tokenDir = join(dir, "serviceaccount");
  await serviceAccountFiles(cluster, {
    namespace: options.pod.namespace,
    serviceAccount: podSpec.serviceAccountName,
    dir: tokenDir,
  });
  const terminationLog = join(dir, "termination-log");
  await Deno.writeTextFile(terminationLog, "");
  const node = cluster.node(options.pod.nodeName);
  const server = new URL(cluster.server);
  // The pod's port is the host's here: the agent listens on a free loopback port instead.
  const args = container.args.map((arg) =>
    arg.startsWith("--http-endpoint=") ? `--http-endpoint=127.0.0.1:${options.httpPort}` : arg
  );
  const command = (container.command as string[] | undefined) ?? options.image.config.Entrypoint;
  const script = containerScript({
    rootfs: options.image.rootfs,
    mounts: [
      { target: SERVICE_ACCOUNT_DIR, kind: "bind", source: tokenDir, readOnly: true },
      { target: "/dev/termination-log", kind: "bind", source: terminationLog, file: true },
      // The socket-dir hostPath is the node's directory, where its driver listens.
      ...volumeMounts(daemonSet, container, { "socket-dir": dirname(node.csiSocket) }),
    ],
    ...securitySettings(container, imageUser(options.image.config.User)),
    command: [...command, ...args],
    env: {
      // The image's environment first: the pod spec's variables override it, as in the kubelet.
      ...imageEnv(options.image.config),
      ...containerEnv(container, options.pod),
      // What the kubelet sets in every container for the default namespace's kubernetes Service.
      KUBERNETES_SERVICE_HOST: server.hostname,
      KUBERNETES_SERVICE_PORT: server.port,
    },
  });
  const group = new ProcessGroup();
  const process = group.spawn({
    name: `image agent ${options.pod.nodeName}`,
    command: "unshare",
    args: ["--mount", "--propagation", "private", "sh", "-c", script],
    logFile: join(cluster.dir, "logs", `image-agent-${options.pod.nodeName}.log`),
  });
  return {
    process,
    url: `http://127.0.0.1:${options.httpPort}`,
    terminationMessage: () => Deno.readTextFile(terminationLog),
    [Symbol.asyncDispose]: () => group.stopAll(),
  };
}

/** The exit code and output of the image's entrypoint run once with `args`, as the image's own user. */
export async function runEntrypoint(
  image: MountedImage,
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { uid, gid } = imageUser(image.config.User);
  const script = containerScript({
    rootfs: image.rootfs,
    mounts: [],
    readOnlyRoot: true,
    uid,
    gid,
    dropAllCapabilities: true,
    noNewPrivs: true,
    command: [...image.config.Entrypoint, ...args],
    env: { ...imageEnv(image.config), ...options.env },
  });
  const output = await new Deno.Command("unshare", {
    args: ["--mount", "--propagation", "private", "sh", "-c", script],
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** The process's identity and privileges as the kernel reports them in /proc/PID/status. */
export async function processPrivileges(pid: number): Promise<
  { uid: string; effective: string; bounding: string; noNewPrivs: string; root: string }
> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => status.match(new RegExp(`^${name}:\\s*(.*)$`, "m"))?.[1] ?? "";
  return {
    uid: field("Uid").split(/\s+/)[0] ?? "",
    effective: field("CapEff"),
    bounding: field("CapBnd"),
    noNewPrivs: field("NoNewPrivs"),
    root: await Deno.readLink(`/proc/${pid}/root`),
  };
}
