/**
 * What the control-plane chaos tests share (kube-apiserver stopped, frozen or
 * restarted; 410 Gone storms; stalled watches): a burst of claims selected to
 * the agents' nodes, the wait until every one is Bound with exactly one PV,
 * what the agents counted in their metrics, and the line each test prints of
 * what it injected and what it counted.
 */
import assert from "node:assert/strict";
import type { Cluster } from "../cluster/cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { waitClaimsBound } from "../cluster/workloads.ts";
import { scrape, selectedClaim } from "../integration/support.ts";

/** Every claim must have its PV this soon after the control plane is back. */
export const BOUND_AFTER_RETURN_MS = 60_000;

/** `prefix-0` … `prefix-(count-1)`. */
export function claimNames(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${index}`);
}

/**
 * Creates the claims, selected to the cluster's nodes in turn, ten at a time
 * side by side (a burst, as a StatefulSet scale-up makes).
 */
export async function createClaims(
  cluster: Cluster,
  options: { namespace: string; names: readonly string[] },
): Promise<void> {
  const nodes = cluster.nodes.map((node) => node.name);
  const create = (name: string, index: number) =>
    cluster.admin.core.createNamespacedPersistentVolumeClaim({
      namespace: options.namespace,
      body: selectedClaim(name, {
        node: nodes[index % nodes.length]!,
        storageClass: cluster.storageClassName("fast"),
        driverName: cluster.driverName,
        size: "100Mi",
      }),
    });
  for (let start = 0; start < options.names.length; start += 10) {
    const chunk = options.names.slice(start, start + 10);
    await Promise.all(chunk.map((name, offset) => create(name, start + offset)));
  }
}

/**
 * The agent's part of a claim is done when its PV exists (the PV names the
 * claim); Bound is then kube-controller-manager's part. After the API server
 * returns, kube-controller-manager's own informers come back on client-go's
 * reflector backoff (800 ms doubling to 30 s, jittered by up to 100 %, so up
 * to a minute), which no agent can shorten: the agents must have provisioned
 * within BOUND_AFTER_RETURN_MS, and Bound may take that backoff longer.
 */
export const CONTROLLER_MANAGER_BACKOFF_MS = 60_000;

/** PVs per claim of the namespace, by the PVs' claimRef. */
async function volumesPerClaim(cluster: Cluster, namespace: string): Promise<Map<string, number>> {
  const volumes = await cluster.admin.core.listPersistentVolume();
  const perClaim = new Map<string, number>();
  for (const volume of volumes.items) {
    const ref = volume.spec?.claimRef;
    if (ref?.namespace !== namespace || !ref.name) continue;
    perClaim.set(ref.name, (perClaim.get(ref.name) ?? 0) + 1);
  }
  return perClaim;
}

/** Waits until every named claim has its PV; resolves to the milliseconds it waited. */
export async function waitAllProvisioned(
  cluster: Cluster,
  options: { namespace: string; names: readonly string[]; timeoutMs?: number },
): Promise<number> {
  const started = performance.now();
  const { namespace, names } = options;
  await waitFor(async () => {
    const perClaim = await volumesPerClaim(cluster, namespace);
    return names.every((name) => perClaim.has(name));
  }, {
    description: `a PV for each of the ${names.length} claims of ${namespace}`,
    timeoutMs: options.timeoutMs ?? BOUND_AFTER_RETURN_MS,
    intervalMs: 250,
  });
  return performance.now() - started;
}

/** Fails unless each named claim has exactly one PV (none lost, none made twice). */
export async function assertOnePvEach(
  cluster: Cluster,
  namespace: string,
  names: readonly string[],
): Promise<void> {
  const perClaim = await volumesPerClaim(cluster, namespace);
  for (const name of names) assert.equal(perClaim.get(name), 1, `PVs of claim ${name}`);
}

/**
 * The control plane is back since `returnedAt` (a performance.now() time):
 * creates the rest of the burst; every claim must have its PV within
 * BOUND_AFTER_RETURN_MS of the return (the agents' part) and be Bound with
 * exactly one PV within CONTROLLER_MANAGER_BACKOFF_MS more. Resolves to the
 * milliseconds from the return to each.
 */
export async function finishBurst(
  cluster: Cluster,
  options: {
    namespace: string;
    rest: readonly string[];
    all: readonly string[];
    returnedAt: number;
  },
): Promise<{ provisionedMs: number; boundMs: number }> {
  const { namespace, returnedAt } = options;
  const since = () => performance.now() - returnedAt;
  await createClaims(cluster, { namespace, names: options.rest });
  await waitAllProvisioned(cluster, {
    namespace,
    names: options.all,
    timeoutMs: BOUND_AFTER_RETURN_MS - since(),
  });
  const provisionedMs = since();
  await waitClaimsBound(cluster.admin, namespace, {
    count: options.all.length,
    timeoutMs: BOUND_AFTER_RETURN_MS + CONTROLLER_MANAGER_BACKOFF_MS - since(),
  });
  await assertOnePvEach(cluster, namespace, options.all);
  return { provisionedMs, boundMs: since() };
}

/** Fails unless every node's agent is still the process started first (it never exited). */
export function assertAgentsRunning(cluster: Cluster): void {
  for (const node of cluster.nodes) {
    const agent = node.agent;
    assert.ok(agent, `${node.name} has an agent`);
    assert.equal(agent.running, true, `the agent of ${node.name} exited (log ${agent.logFile})`);
  }
}

/**
 * The agents' informer restarts by reason, summed over resources and agents
 * (csi_node_provisioner_informer_restarts_total).
 */
export async function informerRestarts(urls: Iterable<string>): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  const series =
    /^csi_node_provisioner_informer_restarts_total\{resource="[^"]+",reason="([^"]+)"\} (\d+)/gm;
  for (const url of urls) {
    for (const [, reason, value] of (await scrape(url)).matchAll(series)) {
      totals[reason!] = (totals[reason!] ?? 0) + Number(value);
    }
  }
  return totals;
}

/** An agent's answer on `path` (e.g. "/healthz"), within the kubelet's probe timeout. */
export async function probe(url: string, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(3000) });
  return { status: response.status, body: await response.text() };
}

/**
 * Asks every agent's /healthz and /readyz twice a second until `until`
 * (a performance.now() time); resolves to the statuses seen, by path.
 */
export async function sampleProbes(
  urls: Iterable<string>,
  until: number,
): Promise<{ healthz: number[]; readyz: number[] }> {
  const agents = [...urls];
  const seen = { healthz: [] as number[], readyz: [] as number[] };
  while (performance.now() < until) {
    for (const url of agents) {
      seen.healthz.push((await probe(url, "/healthz")).status);
      seen.readyz.push((await probe(url, "/readyz")).status);
    }
    await delay(500);
  }
  return seen;
}

/**
 * Compacts etcd's history up to its current revision (physically, as
 * kube-apiserver's own compaction does every 5 minutes), through etcd's
 * JSON gateway; resolves to that revision. A watch then asked to resume
 * from an older resourceVersion is answered 410 Gone.
 */
export async function compactEtcd(cluster: Cluster): Promise<number> {
  const base = `http://127.0.0.1:${cluster.etcd.ports[0]}/v3/kv`;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${base}/${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`etcd ${path}: ${JSON.stringify(answer)}`);
    return answer;
  };
  const range = await post("range", { key: btoa("/registry/"), limit: 1 });
  const revision = Number(range.header.revision);
  await post("compaction", { revision: String(revision), physical: true });
  return revision;
}

/** How many of the agents' informers have their watch open now (csi_node_provisioner_informer_up). */
export async function informersUp(urls: Iterable<string>): Promise<{ up: number; all: number }> {
  const counts = { up: 0, all: 0 };
  const series = /^csi_node_provisioner_informer_up\{resource="[^"]+"\} (\d+)/gm;
  for (const url of urls) {
    for (const [, value] of (await scrape(url)).matchAll(series)) {
      counts.all++;
      if (value === "1") counts.up++;
    }
  }
  return counts;
}

/** The agents' informer log lines, for a failing test's output. */
export async function informerLogs(cluster: Cluster): Promise<string> {
  const lines: string[] = [];
  for (const node of cluster.nodes) {
    if (!node.agent) continue;
    const log = await Deno.readTextFile(node.agent.logFile);
    lines.push(...log.split("\n").filter((line) => line.includes('logger="informer"')));
  }
  return lines.join("\n");
}

/** Prints what a chaos test injected and what it counted, one line each. */
export function report(injected: string, counted: Record<string, unknown>): void {
  console.log(`[chaos] injected: ${injected}`);
  console.log(`[chaos] counted: ${JSON.stringify(counted)}`);
}

/** The seconds of a duration in milliseconds, one decimal. */
export function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
