/**
 * The real control plane on loopback: etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler, each a child process with its own
 * log file, started in dependency order and checked through its health
 * endpoint.
 */

import { join } from "node:path";
import { auditFlags, type AuditLogOptions } from "./audit.ts";
import type { ClusterBinaries } from "./build.ts";
import { httpReady, startComponent } from "./component.ts";
import { ComponentControl } from "./component_control.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { type ControlPlanePki, createControlPlanePki, readGeneratedCa } from "./pki.ts";
import type { ProcessGroup } from "./process.ts";

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  server: string;
  /** The CA bundle kube-apiserver's serving certificate chains to. */
  caPem: string;
  pki: ControlPlanePki;
  adminKubeconfigPath: string;
  etcdUrl: string;
  /** Stop, restart (same port, data dir and certificates), freeze and thaw etcd. */
  etcd: ComponentControl;
  /** Stop, restart (same port and serving certificate), freeze and thaw kube-apiserver. */
  apiserver: ComponentControl;
  /**
   * kube-apiserver's generated serving certificate (leaf + CA, SAN 127.0.0.1)
   * and its key: a TLS-terminating proxy on 127.0.0.1 presents them, so that
   * clients verify it with the cluster's CA bundle (stall_proxy.ts).
   */
  servingCert: { certFile: string; keyFile: string };
  /** DIR/logs/audit.log when the audit log is on. */
  auditLogPath?: string;
  /** ms from the first spawn to each component's readiness. */
  timings: Record<string, number>;
}

export interface ControlPlaneOptions {
  binaries: ClusterBinaries;
  group: ProcessGroup;
  /** Holds etcd data, certificates, kubeconfigs and logs. */
  dir: string;
  /** -v of the Kubernetes components. */
  verbosity?: number;
  /** Turns kube-apiserver's audit log on (see audit.ts). Default off. */
  auditLog?: AuditLogOptions;
  /** Extra kube-apiserver flags. */
  apiServerArgs?: string[];
  /** kube-controller-manager's --controllers. Default CONTROLLERS. */
  controllers?: readonly string[];
  signal?: AbortSignal;
}

/**
 * Controllers kube-controller-manager runs: the volume ones the agent lives
 * with, the garbage collector, and cheap ones that make ordinary workloads
 * (StatefulSets, Deployments, namespaces) behave. Left out on purpose: node
 * lifecycle (it would mark fake nodes NotReady and evict), node IPAM, cloud,
 * service-account tokens (TokenRequest is used instead), certificate signing.
 */
export const CONTROLLERS: readonly string[] = [
  "persistentvolume-binder-controller",
  "persistentvolume-attach-detach-controller",
  "persistentvolume-expander-controller",
  "persistentvolumeclaim-protection-controller",
  "persistentvolume-protection-controller",
  "ephemeral-volume-controller",
  "volumeattributesclass-protection-controller",
  "garbage-collector-controller",
  "namespace-controller",
  "serviceaccount-controller",
  "clusterrole-aggregation-controller",
  "pod-garbage-collector-controller",
  "statefulset-controller",
  "deployment-controller",
  "replicaset-controller",
  "daemonset-controller",
  "job-controller",
];

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { dir } = options;
  const started = performance.now();
  const timings: Record<string, number> = {};
  const mark = (name: string) => (timings[name] = Math.round(performance.now() - started));
  await Deno.mkdir(join(dir, "logs"), { recursive: true });
  const pki = await createControlPlanePki(join(dir, "pki"));
  const etcd = await startEtcd(options);
  const etcdUrl = `http://127.0.0.1:${etcd.ports[0]}`;
  mark("etcd");
  const audit = options.auditLog ? await auditFlags(dir, options.auditLog) : undefined;
  const { server, caPem, apiserver } = await startApiserver(options, {
    pki,
    etcdUrl,
    extraArgs: [...(audit?.args ?? []), ...(options.apiServerArgs ?? [])],
  });
  mark("kube-apiserver");
  const adminKubeconfigPath = await writeKubeconfig(join(dir, "kubeconfig"), {
    server,
    caPem,
    token: pki.admin.token,
    userName: pki.admin.user,
  });
  const kubeconfigDir = join(dir, "kubeconfigs");
  await Deno.mkdir(kubeconfigDir, { recursive: true });
  const writeFor = (name: string, identity: { user: string; token: string }) =>
    writeKubeconfig(join(kubeconfigDir, `${name}.kubeconfig`), {
      server,
      caPem,
      token: identity.token,
      userName: identity.user,
    });
  const kcmKubeconfig = await writeFor("kube-controller-manager", pki.controllerManager);
  const schedulerKubeconfig = await writeFor("kube-scheduler", pki.scheduler);
  // The two are independent of each other: start them side by side.
  await Promise.all([
    startKubeComponent(options, {
      name: "kube-controller-manager",
      kubeconfig: kcmKubeconfig,
      extraArgs: [
        `--controllers=${(options.controllers ?? CONTROLLERS).join(",")}`,
        "--use-service-account-credentials=false",
        // Benchmarks create claims in bursts: the PV binder should not be the bottleneck.
        "--kube-api-qps=200",
        "--kube-api-burst=400",
      ],
    }).then(() => mark("kube-controller-manager")),
    startKubeComponent(options, {
      name: "kube-scheduler",
      kubeconfig: schedulerKubeconfig,
      extraArgs: [],
    }).then(() => mark("kube-scheduler")),
  ]);
  return {
    server,
    caPem,
    pki,
    adminKubeconfigPath,
    etcdUrl,
    etcd,
    apiserver,
    servingCert: {
      certFile: join(dir, "pki", "kube-apiserver", "apiserver.crt"),
      keyFile: join(dir, "pki", "kube-apiserver", "apiserver.key"),
    },
    timings,
    ...(audit ? { auditLogPath: audit.logPath } : {}),
  };
}

async function startEtcd(options: ControlPlaneOptions): Promise<ComponentControl> {
  const { dir, group } = options;
  const health = (client: number | undefined) => httpReady(`http://127.0.0.1:${client}/health`);
  const started = await startComponent(group, {
    name: "etcd",
    binary: options.binaries.etcd,
    logFile: join(dir, "logs", "etcd.log"),
    portCount: 2,
    args: ([client, peer]) => [
      "--name=default",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      // Throwaway data: durability costs start-up and benchmark time for nothing.
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    probe: ([client]) => health(client),
  }, options.signal);
  return new ComponentControl(group, { ...started, probe: () => health(started.ports[0]) });
}

async function startApiserver(
  options: ControlPlaneOptions,
  deps: { pki: ControlPlanePki; etcdUrl: string; extraArgs: string[] },
): Promise<{ server: string; caPem: string; apiserver: ComponentControl }> {
  const { dir, group } = options;
  const certDir = join(dir, "pki", "kube-apiserver");
  const { pki } = deps;
  let caPem: string | undefined;
  const started = await startComponent(group, {
    name: "kube-apiserver",
    binary: options.binaries.kubeApiserver,
    logFile: join(dir, "logs", "kube-apiserver.log"),
    portCount: 1,
    args: ([port]) => [
      `--etcd-servers=${deps.etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      `--token-auth-file=${pki.tokenAuthFile}`,
      "--authorization-mode=Node,RBAC",
      `--service-account-issuer=https://127.0.0.1:${port}`,
      `--service-account-key-file=${pki.serviceAccountKeyFile}`,
      `--service-account-signing-key-file=${pki.serviceAccountSigningKeyFile}`,
      "--service-cluster-ip-range=10.96.0.0/16",
      // No kubernetes Service endpoints: 127.0.0.1 is not a valid endpoint address.
      "--endpoint-reconciler-type=none",
      // It would taint every new Node not-ready, a taint only the (disabled)
      // node lifecycle controller removes.
      "--disable-admission-plugins=TaintNodesByCondition",
      "--allow-privileged=true",
      "--profiling=false",
      `--v=${options.verbosity ?? 1}`,
      ...deps.extraArgs,
    ],
    probe: async ([port]) => {
      caPem ??= await readGeneratedCa(certDir);
      return caPem !== undefined &&
        await httpReady(`https://127.0.0.1:${port}/readyz`, { caPem, token: pki.admin.token });
    },
  }, options.signal);
  if (caPem === undefined) throw new Error("kube-apiserver is ready but wrote no certificate");
  const generatedCa = caPem;
  const server = `https://127.0.0.1:${started.ports[0]}`;
  // The CA is read again at each probe: a test may put a certificate of another CA in --cert-dir.
  const probe = async () =>
    httpReady(`${server}/readyz`, {
      caPem: (await readGeneratedCa(certDir)) ?? generatedCa,
      token: pki.admin.token,
    });
  return { server, caPem, apiserver: new ComponentControl(group, { ...started, probe }) };
}

async function startKubeComponent(
  options: ControlPlaneOptions,
  component: { name: string; kubeconfig: string; extraArgs: string[] },
): Promise<void> {
  const certDir = join(options.dir, "pki", component.name);
  await startComponent(options.group, {
    name: component.name,
    binary: component.name === "kube-scheduler"
      ? options.binaries.kubeScheduler
      : options.binaries.kubeControllerManager,
    logFile: join(options.dir, "logs", `${component.name}.log`),
    portCount: 1,
    args: ([port]) => [
      `--kubeconfig=${component.kubeconfig}`,
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      `--v=${options.verbosity ?? 1}`,
      ...component.extraArgs,
    ],
    probe: async ([port]) => {
      const caPem = await readGeneratedCa(certDir);
      return caPem !== undefined && await httpReady(`https://127.0.0.1:${port}/healthz`, { caPem });
    },
  }, options.signal);
}
