/**
 * What the chaos tests share: bursts of claims selected to a node, random
 * moments from a seeded generator (the seed is printed: CHAOS_SEED=<n>
 * replays a run's moments), agents killed and restarted (and restarted when
 * they exit on their own, as the kubelet would), the ledger that counts what
 * a user would see (claims, PVs, the driver's volumes, leaks, duplicates,
 * lost volumes), and the one line each scenario prints.
 */
import assert from "node:assert/strict";
import type { V1PersistentVolume } from "@kubernetes/client-node";
import type { AuditEvent } from "../cluster/audit.ts";
import { startCluster } from "../cluster/cluster.ts";
import type { ClusterNode } from "../cluster/cluster_node.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { claimsIn } from "../cluster/workloads.ts";
import { selectedClaim, startOurAgents } from "../integration/support.ts";
import type { VolumeIds } from "../csi_driver/config.ts";

/** The flags of every chaos agent: short timeouts and retries, so that faults cost seconds. */
export const CHAOS_AGENT_ARGS: readonly string[] = [
  "--worker-threads=5",
  "--timeout=3s",
  "--retry-interval-start=200ms",
  "--retry-interval-max=2s",
  "-v=2",
];

/**
 * One node, named node-a (or the nodes given), with the project's test
 * driver (the chaos faults, latency and lost answers, are its own; its
 * volume IDs random or made from names) or democratic-csi's local-hostpath
 * driver (no faults; volume IDs are the names), and our agent, started with
 * CHAOS_AGENT_ARGS and then `agentArgs` (a repeated flag: the last wins).
 */
export async function startChaosCluster(options: ChaosClusterOptions): Promise<RunningCluster> {
  return (await startChaosAgents(options)).cluster;
}

export interface ChaosClusterOptions {
  /** Default "test". */
  driver?: "test" | "democratic";
  /** The test driver's pool size. */
  capacity?: string;
  agentArgs?: string[];
  auditLog?: boolean;
  volumeIds?: VolumeIds;
  nodes?: string[];
}

/** startChaosCluster, and each node's agent URL (its /readyz and /metrics). */
export async function startChaosAgents(
  options: ChaosClusterOptions,
): Promise<{ cluster: RunningCluster; urls: Map<string, string> }> {
  const driver = options.driver ?? "test";
  const cluster = await startCluster({
    nodes: options.nodes ?? ["node-a"],
    driver,
    ...(driver === "test"
      ? {
        driverOptions: {
          capacity: { fast: options.capacity ?? "10Gi" },
          volumeIds: options.volumeIds ?? "random",
        },
      }
      : {}),
    storageCapacity: false,
    ...(options.auditLog ? { auditLog: {} } : {}),
  });
  try {
    const args = [...CHAOS_AGENT_ARGS, ...(options.agentArgs ?? [])];
    return { cluster, urls: await startOurAgents(cluster, { args }) };
  } catch (error) {
    await cluster[Symbol.asyncDispose]();
    throw error;
  }
}

/** Calls of a method the driver got, and those whose answer the agent did not get (not OK). */
export async function callCounts(
  node: ClusterNode,
  method: "CreateVolume" | "DeleteVolume",
): Promise<Record<string, number>> {
  const calls = await node.calls(method);
  return {
    [`${method} calls`]: calls.length,
    "answers lost or abandoned": calls.filter((call) => call.codeName !== "OK").length,
  };
}

/**
 * Per PV name, how many requests of that verb kube-apiserver logged; with
 * `succeeded`, only those it completed with 2xx (a request whose client was
 * killed may end in another stage).
 */
function pvRequests(
  events: AuditEvent[],
  verb: string,
  options: { succeeded: boolean },
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of events) {
    const code = event.responseStatus?.code ?? 0;
    const succeeded = event.stage === "ResponseComplete" && code >= 200 && code <= 299;
    if (event.verb !== verb || (options.succeeded && !succeeded)) continue;
    if (event.objectRef?.resource !== "persistentvolumes") continue;
    const name = event.objectRef.name ?? "";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** A PV's API calls, one line each, for a failure's message. */
function pvCalls(events: AuditEvent[], name: string): string {
  const lines = events.filter((event) =>
    event.objectRef?.resource === "persistentvolumes" && event.objectRef.name === name
  ).map((event) =>
    `${event.stageTimestamp} ${event.user.username} ${event.verb} ${event.responseStatus?.code}`
  );
  return [`API calls on ${name}:`, ...lines].join("\n  ");
}

/** What kube-apiserver's audit log says of some PVs' lives, by PV name. */
export interface PvAudit {
  /** No create request logged, or more than one that succeeded: created again. */
  notCreatedOnce: string[];
  /** No DELETE request logged: removed by someone else (or never). */
  notDeleted: string[];
  /** Two successful DELETEs: a killed agent's DELETE landed after its successor read the PV. */
  deletedTwice: string[];
  /** Two successful DELETEs with no agent ended between them: no kill explains the second. */
  deletedTwiceWithoutEnding: string[];
}

/**
 * Each PV's creates and deletes in the audit log, with the calls of every
 * PV that is not counted clean printed. Two successful DELETEs of one PV
 * are accepted only when an agent ended between them (`endings`): a killed
 * agent's DELETE in flight may land after its successor read the PV, and
 * the successor's DELETE of a PV already being deleted succeeds again
 * without changing anything; a killed request may also land with no success
 * recorded. `deleted`: whether the PVs were meant to be deleted.
 */
export function pvAudit(
  events: AuditEvent[],
  names: Iterable<string>,
  options: { deleted: boolean; endings?: readonly number[] },
): PvAudit {
  const creates = pvRequests(events, "create", { succeeded: false });
  const created = pvRequests(events, "create", { succeeded: true });
  const deletes = pvRequests(events, "delete", { succeeded: false });
  const deleted = successfulDeletes(events);
  const all = [...names];
  const audit = {
    notCreatedOnce: all.filter((name) =>
      (creates.get(name) ?? 0) === 0 || (created.get(name) ?? 0) > 1
    ),
    notDeleted: options.deleted ? all.filter((name) => (deletes.get(name) ?? 0) === 0) : [],
    deletedTwice: all.filter((name) => (deleted.get(name)?.length ?? 0) > 1),
    deletedTwiceWithoutEnding: all.filter((name) =>
      !endedBetween(deleted.get(name) ?? [], options.endings ?? [])
    ),
  };
  const shown = new Set([
    ...audit.notCreatedOnce,
    ...audit.notDeleted,
    ...audit.deletedTwiceWithoutEnding,
  ]);
  for (const name of shown) console.log(pvCalls(events, name));
  return audit;
}

/** How long a killed agent's request may still be on its way to kube-apiserver. */
const IN_FLIGHT_MS = 10_000;

/**
 * Whether two or more successful DELETEs of a PV are explained by an agent
 * that ended between them: its request, sent before it ended, landed late.
 * One DELETE (or none) needs no explanation.
 */
function endedBetween(received: readonly number[], endings: readonly number[]): boolean {
  if (received.length < 2) return true;
  const first = Math.min(...received) - IN_FLIGHT_MS;
  const last = Math.max(...received);
  return endings.some((ending) => ending >= first && ending <= last);
}

/** When kube-apiserver received each successful DELETE of a PV, by PV name. */
function successfulDeletes(events: AuditEvent[]): Map<string, number[]> {
  const times = new Map<string, number[]>();
  for (const event of events) {
    const code = event.responseStatus?.code ?? 0;
    if (event.verb !== "delete" || event.objectRef?.resource !== "persistentvolumes") continue;
    if (event.stage !== "ResponseComplete" || code < 200 || code > 299) continue;
    const name = event.objectRef.name ?? "";
    const at = Date.parse(event.requestReceivedTimestamp ?? event.stageTimestamp ?? "");
    times.set(name, [...times.get(name) ?? [], at]);
  }
  return times;
}

/** A random generator from a seed (mulberry32), so that a run's moments can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: CHAOS_SEED, or a fresh one; printed by the caller. */
export function chaosSeed(): number {
  const given = Number(Deno.env.get("CHAOS_SEED"));
  return Number.isSafeInteger(given) && given > 0 ? given : Date.now() % 2_147_483_647;
}

/** A whole number of milliseconds in [min, max]. */
export function between(random: () => number, min: number, max: number): number {
  return Math.round(min + random() * (max - min));
}

/** Creates `count` claims selected to the given nodes in turn; resolves to their names. */
export async function createBurst(
  cluster: RunningCluster,
  options: {
    namespace: string;
    count: number;
    nodes: string[];
    storageClass: string;
    prefix?: string;
    size?: string;
  },
): Promise<string[]> {
  const names = Array.from({ length: options.count }, (_, i) => `${options.prefix ?? "c"}-${i}`);
  await Promise.all(
    names.map((name, i) =>
      cluster.admin.core.createNamespacedPersistentVolumeClaim({
        namespace: options.namespace,
        body: selectedClaim(name, {
          node: options.nodes[i % options.nodes.length]!,
          storageClass: options.storageClass,
          size: options.size ?? "10Mi",
          driverName: cluster.driverName,
        }),
      })
    ),
  );
  return names;
}

/** Creates one claim selected to the node; resolves to its uid. */
export async function createClaim(
  cluster: RunningCluster,
  options: { namespace: string; name: string; node: string; storageClass: string },
): Promise<string> {
  const created = await cluster.admin.core.createNamespacedPersistentVolumeClaim({
    namespace: options.namespace,
    body: selectedClaim(options.name, {
      node: options.node,
      storageClass: options.storageClass,
      size: "10Mi",
      driverName: cluster.driverName,
    }),
  });
  return created.metadata?.uid ?? "";
}

/** Deletes a claim and waits until it is gone (so that its name can be used again). */
export async function deleteClaim(
  cluster: RunningCluster,
  ref: { namespace: string; name: string },
): Promise<void> {
  await cluster.admin.core.deleteNamespacedPersistentVolumeClaim(ref);
  await waitFor(async () => {
    try {
      await cluster.admin.core.readNamespacedPersistentVolumeClaim(ref);
      return false;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return true;
      throw error;
    }
  }, { description: `claim ${ref.namespace}/${ref.name} gone`, timeoutMs: 30_000 });
}

/** The volume names the node's driver holds. */
export async function volumeNames(node: ClusterNode): Promise<Set<string>> {
  return new Set((await node.volumes()).map((volume) => volume.name));
}

/** What a user would count, over the driver's PVs and every node's driver. */
export interface Ledger {
  claims: number;
  bound: number;
  pvs: number;
  volumes: number;
  /** Driver volumes no PV holds. */
  leaks: string[];
  /** Claims with more than one PV, and volume names held twice. */
  duplicates: string[];
  /** PVs whose volume is not in any driver. */
  lost: string[];
  /** Bound claims whose PV does not name them. */
  misbound: string[];
}

/**
 * Counts claims (of the given namespaces), PVs and volumes, and what does
 * not match. A volume is held by a PV that names its handle and its node:
 * with volume IDs made from names, two nodes' volumes share a handle.
 */
export async function ledger(
  cluster: RunningCluster,
  namespaces: string[],
): Promise<Ledger> {
  const claims = (await Promise.all(namespaces.map((ns) => claimsIn(cluster.admin, ns)))).flat();
  const pvs = (await cluster.admin.core.listPersistentVolume()).items
    .filter((pv) => pv.spec?.csi?.driver === cluster.driverName);
  const nodeNames = cluster.nodes.map((node) => node.name);
  const volumes = (await Promise.all(
    cluster.nodes.map(async (node) =>
      (await node.volumes()).map((volume) => ({ ...volume, node: node.name }))
    ),
  )).flat();
  const handles = new Set(
    pvs.map((pv) => `${pvNode(pv, nodeNames)}/${pv.spec?.csi?.volumeHandle}`),
  );
  const ids = new Set(volumes.map((volume) => `${volume.node}/${volume.id}`));
  const byClaim = countBy(pvs, (pv) => pv.spec?.claimRef?.uid ?? "");
  const byName = countBy(volumes, (volume) => volume.name);
  const pvByName = new Map(pvs.map((pv) => [pv.metadata?.name, pv]));
  return {
    claims: claims.length,
    bound: claims.filter((claim) => claim.status?.phase === "Bound").length,
    pvs: pvs.length,
    volumes: volumes.length,
    leaks: volumes.filter((volume) => !handles.has(`${volume.node}/${volume.id}`)).map((v) =>
      `${v.name} (${v.id} on ${v.node})`
    ),
    duplicates: [
      ...[...byClaim].filter(([uid, n]) => uid !== "" && n > 1).map(([uid, n]) =>
        `claim ${uid}: ${n} PVs`
      ),
      ...[...byName].filter(([, n]) => n > 1).map(([name, n]) => `volume ${name}: ${n} times`),
    ],
    lost: pvs.filter((pv) =>
      !ids.has(`${pvNode(pv, nodeNames)}/${pv.spec?.csi?.volumeHandle ?? ""}`)
    ).map(pvName),
    misbound: claims.filter((claim) => claim.status?.phase === "Bound").filter((claim) =>
      pvByName.get(claim.spec?.volumeName)?.spec?.claimRef?.uid !== claim.metadata?.uid
    ).map((claim) => claim.metadata?.name ?? ""),
  };
}

function pvName(pv: V1PersistentVolume): string {
  return pv.metadata?.name ?? "";
}

/** The node a PV's node affinity names (the test and democratic drivers' topology values are node names). */
function pvNode(pv: V1PersistentVolume, nodeNames: string[]): string {
  const values = (pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [])
    .flatMap((term) => term.matchExpressions ?? []).flatMap((expression) =>
      expression.values ?? []
    );
  return values.find((value) => nodeNames.includes(value)) ?? "(no node)";
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/** Waits until the ledger has no leak and no lost volume, and the counts expected (settling takes a few retries). */
export async function settledLedger(
  cluster: RunningCluster,
  namespaces: string[],
  options: { timeoutMs?: number; expectVolumes?: number; expectPvs?: number } = {},
): Promise<Ledger> {
  let last: Ledger | undefined;
  try {
    return await waitFor(async () => {
      last = await ledger(cluster, namespaces);
      const settled = last.leaks.length === 0 && last.lost.length === 0 &&
        (options.expectVolumes === undefined || last.volumes === options.expectVolumes) &&
        (options.expectPvs === undefined || last.pvs === options.expectPvs);
      return settled ? last : undefined;
    }, {
      description: "every volume held by one PV",
      timeoutMs: options.timeoutMs ?? 60_000,
      intervalMs: 500,
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; last count: ${JSON.stringify(last)}`);
  }
}

/** Asserts what every scenario promises: one PV per claim, nothing leaked, lost or doubled. */
export function assertClean(counted: Ledger, expected: { bound: number }): void {
  assert.deepEqual(counted.leaks, [], "volumes without a PV (leaked)");
  assert.deepEqual(counted.lost, [], "PVs whose volume is gone (lost)");
  assert.deepEqual(counted.duplicates, [], "duplicates");
  assert.deepEqual(counted.misbound, [], "claims bound to a PV made for another");
  assert.equal(counted.bound, expected.bound, "Bound claims");
}

/** Prints the scenario's line: what was injected and what was counted. */
export function report(
  scenario: string,
  injected: Record<string, unknown>,
  counted: Ledger | Record<string, unknown>,
  extra: Record<string, unknown> = {},
): void {
  const counts = isLedger(counted)
    ? {
      claims: counted.claims,
      bound: counted.bound,
      pvs: counted.pvs,
      volumes: counted.volumes,
      leaks: counted.leaks.length,
      duplicates: counted.duplicates.length,
      lost: counted.lost.length,
    }
    : counted;
  const line = (record: Record<string, unknown>) =>
    Object.entries(record).map(([key, value]) => `${key} ${value}`).join(", ");
  console.log(
    `CHAOS ${scenario} | injected: ${line(injected)} | counted: ${line({ ...counts, ...extra })}`,
  );
}

function isLedger(value: Ledger | Record<string, unknown>): value is Ledger {
  return Array.isArray((value as Ledger).leaks);
}

/**
 * A node's agent under chaos: the test kills it (SIGKILL) and it is started
 * again at once; if it exits on its own (it does when its connection to the
 * driver is cut: crash-only, as upstream), it is restarted too, as the
 * kubelet would, and counted.
 */
export class ChaosAgent {
  readonly node: ClusterNode;
  kills = 0;
  selfExits = 0;
  /** When each of its processes ended (killed, or exited on its own), on this machine's clock. */
  readonly endings: number[] = [];
  #busy: Promise<void> = Promise.resolve();
  #stopped = false;
  readonly #watching: Promise<void>;

  constructor(node: ClusterNode) {
    if (!node.agent) throw new Error(`${node.name} has no agent`);
    this.node = node;
    this.#watching = this.#watchExits();
  }

  /** SIGKILL, then (after `whileDown`, if given) the same command line again. */
  kill(whileDown?: () => Promise<void>): Promise<void> {
    this.#busy = this.#busy.then(async () => {
      await this.node.agent!.kill();
      this.endings.push(Date.now());
      this.kills++;
      await whileDown?.();
      await this.node.agent!.restart();
    });
    return this.#busy;
  }

  async #watchExits(): Promise<void> {
    while (!this.#stopped) {
      const process = this.node.agent!.process;
      await process.exited;
      await this.#busy;
      if (this.#stopped) return;
      if (this.node.agent!.process !== process) continue;
      this.endings.push(Date.now());
      this.selfExits++;
      this.#busy = this.node.agent!.restart();
      await this.#busy;
    }
  }

  /** Kills at random moments until `kills` kills were made or `done()` holds. */
  async killAtRandom(
    random: () => number,
    options: { kills: number; gapMs: [number, number]; done: () => Promise<boolean> },
  ): Promise<number> {
    for (let i = 0; i < options.kills; i++) {
      await delay(between(random, ...options.gapMs));
      if (await options.done()) break;
      await this.kill();
    }
    return this.kills;
  }

  /** Stops restarting it and stops it; resolves once it exited. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#busy;
    await this.node.agent!.stop();
    await this.#watching;
  }
}
