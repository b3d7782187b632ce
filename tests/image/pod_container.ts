/**
 * What a container runtime would make of deploy/'s agent container, for
 * machines without one: the mounts (kubelet's ServiceAccount token,
 * /dev/termination-log, the pod's volumes), the read-only root, the user,
 * the dropped capabilities and no_new_privs, the command line and the
 * environment, read from the rendered DaemonSet. containerScript() turns it
 * into a shell script that sets it all up in a private mount namespace and
 * then execs the image's entrypoint in a chroot of the image's root
 * filesystem. Only what the pod spec states is done; seccomp and cgroups are
 * not (the agent makes no use of either).
 */

import type { Container, K8sObject } from "../deploy/render.ts";

export interface ContainerMount {
  /** Path in the container. */
  target: string;
  kind: "bind" | "tmpfs" | "proc" | "sysfs";
  /** Host path, for bind mounts. */
  source?: string;
  /** A file rather than a directory (bind mounts only). */
  file?: boolean;
  readOnly?: boolean;
  /** mount(8) options for tmpfs, e.g. size=16m,mode=1777. */
  options?: string;
}

export interface ContainerRun {
  rootfs: string;
  mounts: ContainerMount[];
  readOnlyRoot: boolean;
  uid: number;
  gid: number;
  dropAllCapabilities: boolean;
  noNewPrivs: boolean;
  /** The entrypoint and its arguments. */
  command: string[];
  /** The whole environment (nothing is inherited). */
  env: Record<string, string>;
}

/** Device nodes every container gets (runc's defaults). */
const DEVICES = ["null", "zero", "full", "random", "urandom", "tty"];
/** Where the kubelet mounts the pod's ServiceAccount token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Single-quoted for sh. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

function mountLines(root: string, mount: ContainerMount): string[] {
  const target = shellQuote(`${root}${mount.target}`);
  switch (mount.kind) {
    case "proc":
      return [`mount -t proc proc ${target}`];
    case "sysfs":
      return [`mount --rbind /sys ${target}`, `mount -o remount,bind,ro ${target}`];
    case "tmpfs":
      return [`mount -t tmpfs -o ${mount.options ?? "mode=755"} tmpfs ${target}`];
    case "bind":
      return [
        `mount --bind ${shellQuote(mount.source!)} ${target}`,
        ...(mount.readOnly ? [`mount -o remount,bind,ro ${target}`] : []),
      ];
  }
}

/**
 * The script run by `unshare --mount --propagation private sh -c SCRIPT`:
 * mount points are made in the root filesystem first (as a runtime does),
 * the root is bind-mounted onto itself so it can be made read-only, and the
 * last line execs the entrypoint, so the process keeps the script's pid.
 */
export function containerScript(run: ContainerRun): string {
  const root = run.rootfs;
  const q = (path: string) => shellQuote(`${root}${path}`);
  const lines = ["set -eu"];
  const mounts = [
    { target: "/proc", kind: "proc" } as ContainerMount,
    { target: "/sys", kind: "sysfs" } as ContainerMount,
    { target: "/dev", kind: "tmpfs", options: "mode=755,size=64k" } as ContainerMount,
    ...DEVICES.map((name): ContainerMount => ({
      target: `/dev/${name}`,
      kind: "bind",
      source: `/dev/${name}`,
      file: true,
    })),
    { target: "/dev/shm", kind: "tmpfs", options: "mode=1777,size=64m" } as ContainerMount,
    ...run.mounts,
  ];
  lines.push(`mount --bind ${shellQuote(root)} ${shellQuote(root)}`);
  for (const mount of mounts) {
    lines.push(mount.file ? `touch ${q(mount.target)}` : `mkdir -p ${q(mount.target)}`);
    lines.push(...mountLines(root, mount));
  }
  if (run.readOnlyRoot) lines.push(`mount -o remount,bind,ro ${shellQuote(root)}`);
  // Re-enter the root through the new mounts before chroot.
  lines.push(`cd ${shellQuote(root)}`);
  const env = Object.entries(run.env).map(([key, value]) => shellQuote(`${key}=${value}`));
  const [entrypoint, ...args] = run.command;
  const capsh = [
    `--chroot=${root}`,
    ...(run.dropAllCapabilities ? ["--drop=all"] : []),
    `--gid=${run.gid}`,
    "--groups=",
    `--uid=${run.uid}`,
    ...(run.noNewPrivs ? ["--no-new-privs"] : []),
    `--shell=${entrypoint}`,
    "--",
    ...args,
  ].map(shellQuote);
  // env -i leaves no PATH: capsh is named by its path.
  lines.push('capsh="$(command -v capsh)"');
  lines.push(["exec", "env", "-i", ...env, '"$capsh"', ...capsh].join(" "));
  return lines.join("\n");
}

/** The pod's values for the downward-API fields deploy/ uses. */
export interface PodFacts {
  nodeName: string;
  namespace: string;
  podName: string;
}

function fieldValue(fieldPath: string, pod: PodFacts): string {
  const values: Record<string, string> = {
    "spec.nodeName": pod.nodeName,
    "metadata.namespace": pod.namespace,
    "metadata.name": pod.podName,
  };
  const value = values[fieldPath];
  if (value === undefined) throw new Error(`no value for the downward-API field ${fieldPath}`);
  return value;
}

/** The container's environment: literal values and downward-API fields. */
export function containerEnv(container: Container, pod: PodFacts): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const literal = (variable as { value?: string }).value;
    const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
    if (literal !== undefined) env[variable.name] = literal;
    else if (fieldPath !== undefined) env[variable.name] = fieldValue(fieldPath, pod);
    else throw new Error(`env ${variable.name}: only values and fieldRefs are supported here`);
  }
  return env;
}

interface Volume {
  name: string;
  hostPath?: { path: string };
  emptyDir?: { medium?: string; sizeLimit?: string };
}

interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

/** Kubernetes quantities as tmpfs sizes: 16Mi → 16m. */
export function tmpfsSize(quantity: string): string {
  const match = quantity.match(/^(\d+)(Ki|Mi|Gi)?$/);
  if (!match) throw new Error(`sizeLimit ${quantity}: not a binary quantity`);
  const unit = { Ki: "k", Mi: "m", Gi: "g" }[match[2] ?? ""] ?? "";
  return `${match[1]}${unit}`;
}

/**
 * The container's volume mounts on this machine: a hostPath volume is bound
 * from `hostPaths[volume name]` (the test cluster's node directory stands in
 * for the node's), a memory emptyDir is a tmpfs of its size limit.
 */
export function volumeMounts(
  daemonSet: K8sObject,
  container: Container,
  hostPaths: Record<string, string>,
): ContainerMount[] {
  const volumes = (daemonSet.spec as { template: { spec: { volumes: Volume[] } } }).template.spec
    .volumes;
  return ((container.volumeMounts ?? []) as VolumeMount[]).map((mount): ContainerMount => {
    const volume = volumes.find((candidate) => candidate.name === mount.name);
    if (volume?.hostPath) {
      const source = hostPaths[mount.name];
      if (source === undefined) throw new Error(`no host directory given for volume ${mount.name}`);
      return { target: mount.mountPath, kind: "bind", source, readOnly: mount.readOnly ?? false };
    }
    if (volume?.emptyDir) {
      const size = volume.emptyDir.sizeLimit ? `,size=${tmpfsSize(volume.emptyDir.sizeLimit)}` : "";
      return { target: mount.mountPath, kind: "tmpfs", options: `mode=1777${size}` };
    }
    throw new Error(`volume ${mount.name}: only hostPath and emptyDir are supported here`);
  });
}

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
}

/** The user, root file system and privileges from the container's securityContext. */
export function securitySettings(
  container: Container,
  image: { uid: number; gid: number },
): Pick<ContainerRun, "uid" | "gid" | "readOnlyRoot" | "dropAllCapabilities" | "noNewPrivs"> {
  const context = (container.securityContext ?? {}) as SecurityContext;
  if ((context.capabilities?.add ?? []).length > 0) {
    throw new Error("added capabilities are not supported here");
  }
  // A runAsUser without runAsGroup takes that user's group from the image's
  // /etc/passwd, and group 0 when the image has none (containerd, CRI-O).
  const gid = context.runAsGroup ?? (context.runAsUser === undefined ? image.gid : 0);
  return {
    uid: context.runAsUser ?? image.uid,
    gid,
    readOnlyRoot: context.readOnlyRootFilesystem === true,
    dropAllCapabilities: (context.capabilities?.drop ?? []).includes("ALL"),
    noNewPrivs: context.allowPrivilegeEscalation === false,
  };
}
