/**
 * Runtime floor 3 (`deno task bench:floor-claim`): the least work a node agent
 * does per claim, through the agent's own transport modules (lib/kube/rest/client.ts
 * over fetch, lib/csi/connection.ts over grpc-js) and nothing else: no
 * decisions beyond "selected to my node and not yet handled", no journal, no
 * metrics, no logs, no retries, no work queue. Its CPU and RSS per claim in a
 * burst are the floor under the agent's on Bun.
 *
 * It takes the agent's command line and environment (--csi-address,
 * --kubeconfig, --http-endpoint, --worker-threads, --kube-api-qps,
 * --kube-api-burst, NODE_NAME), so the burst harness measures it in the
 * agent's place:
 * - watches claims, and its node's PersistentVolumes (by the agent's
 *   labels, which it puts on its PVs), parsing every event, as an informer
 *   must;
 * - for each claim selected to its node without a volume, with
 *   --worker-threads in flight: the Provisioning Event, CreateVolume, the PV,
 *   the ProvisioningSucceeded Event: what upstream sends per claim;
 * - with --enable-capacity, publishes its node's capacity once at start
 *   (per_claim_capacity.ts);
 * - serves /readyz and /metrics, and logs the agent's ready line once both
 *   watches are open.
 * Not a provisioner: it skips every other case, and retries a failed claim
 * after a second (a claim left without a PV would hold the benchmark).
 */
import { randomBytes } from "node:crypto";
import { openCsiConnection } from "../../lib/csi/connection.ts";
import type { CreateVolumeRequest, Volume } from "../../lib/csi/types.ts";
import { loadCredentials } from "../../lib/kube/rest/credentials.ts";
import { createKubeRest, hasStatus, type KubeRest } from "../../lib/kube/rest/client.ts";
import { createLogger } from "../../lib/log/logger.ts";
import { labelSelector, nodeLabels } from "../../lib/model/labels.ts";
import type { Claim } from "../../lib/model/objects.ts";
import { parseQuantity } from "../../lib/model/quantity.ts";
import { claimSubject } from "../../lib/provision/context.ts";
import { serveHttp } from "../../lib/runtime/platform.ts";
import { type FloorClass, MOUNT_SINGLE_WRITER, publishCapacityOnce } from "./per_claim_capacity.ts";

/** The agent's ready line (bench/agent_runner.ts OURS_READY_LINE). */
const READY_LINE = "Informers synced; provisioning claims (per-claim floor program)";
const SELECTED_NODE = "volume.kubernetes.io/selected-node";

interface ClaimObject {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    annotations?: Record<string, string>;
  };
  spec: {
    volumeName?: string;
    storageClassName?: string;
    accessModes?: string[];
    volumeMode?: string;
    resources?: { requests?: { storage?: string } };
  };
}

/** `--name=value` flags; every other argument is ignored. */
function flags(args: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const arg of args) {
    const match = /^--?([\w-]+)(?:=(.*))?$/.exec(arg);
    if (match) found.set(match[1]!, match[2] ?? "true");
  }
  return found;
}

/** A queue of claims served to `workers` loops. */
class ClaimQueue {
  #items: ClaimObject[] = [];
  #waiting: ((claim: ClaimObject) => void)[] = [];

  push(claim: ClaimObject): void {
    const waiter = this.#waiting.shift();
    if (waiter) waiter(claim);
    else this.#items.push(claim);
  }

  next(): Promise<ClaimObject> {
    const item = this.#items.shift();
    if (item) return Promise.resolve(item);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** Everything one claim's provisioning needs. */
interface Context {
  rest: KubeRest;
  csi: ReturnType<typeof openCsiConnection>;
  driver: string;
  node: string;
  topologyKey: string;
  classes: Map<string, FloorClass>;
}

function event(claim: ClaimObject, context: Context, reason: string, message: string) {
  const now = new Date().toISOString();
  const { name, namespace } = claim.metadata;
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${name}.${randomBytes(8).toString("hex")}`, namespace },
    involvedObject: claimSubject(claim as Claim),
    reason,
    message,
    type: "Normal",
    source: { component: `${context.driver}_${context.node}` },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

function postEvent(claim: ClaimObject, context: Context, reason: string, message: string): void {
  void context.rest.request({
    method: "POST",
    path: `/api/v1/namespaces/${claim.metadata.namespace}/events`,
    body: event(claim, context, reason, message),
    priority: "low",
  }).catch(() => {});
}

function persistentVolume(claim: ClaimObject, context: Context, volume: Volume, cls: FloorClass) {
  const segments = volume.accessible_topology.map((topology) => topology.segments);
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name: `pvc-${claim.metadata.uid}`,
      // The agent's labels: its PV watch selects them, so other nodes are not sent this PV.
      labels: nodeLabels(context.driver, context.node),
      annotations: { "pv.kubernetes.io/provisioned-by": context.driver },
      finalizers: ["external-provisioner.volume.kubernetes.io/finalizer"],
    },
    spec: {
      capacity: { storage: volume.capacity_bytes },
      accessModes: claim.spec.accessModes ?? ["ReadWriteOnce"],
      claimRef: claimSubject(claim as Claim),
      persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? "Delete",
      storageClassName: cls.metadata.name,
      volumeMode: claim.spec.volumeMode ?? "Filesystem",
      csi: {
        driver: context.driver,
        volumeHandle: volume.volume_id,
        volumeAttributes: volume.volume_context,
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: segments.map((segment) => ({
            matchExpressions: Object.entries(segment).map(([key, value]) => ({
              key,
              operator: "In",
              values: [value],
            })),
          })),
        },
      },
    },
  };
}

function createVolumeRequest(claim: ClaimObject, context: Context, cls: FloorClass) {
  const parsed = parseQuantity(claim.spec.resources?.requests?.storage ?? "0");
  const topology = { segments: { [context.topologyKey]: context.node } };
  const request: CreateVolumeRequest = {
    name: `pvc-${claim.metadata.uid}`,
    capacity_range: { required_bytes: String(parsed.ok ? parsed.value : 0n) },
    volume_capabilities: [MOUNT_SINGLE_WRITER],
    parameters: cls.parameters ?? {},
    secrets: {},
    accessibility_requirements: { requisite: [topology], preferred: [topology] },
  };
  return request;
}

async function provision(claim: ClaimObject, context: Context): Promise<void> {
  const cls = context.classes.get(claim.spec.storageClassName ?? "");
  if (cls === undefined || cls.provisioner !== context.driver) return;
  const { namespace, name } = claim.metadata;
  postEvent(
    claim,
    context,
    "Provisioning",
    `External provisioner is provisioning volume for claim "${namespace}/${name}"`,
  );
  const response = await context.csi.call("CreateVolume", createVolumeRequest(claim, context, cls));
  if (response.volume === null) return;
  const pv = persistentVolume(claim, context, response.volume, cls);
  try {
    await context.rest.request({ method: "POST", path: "/api/v1/persistentvolumes", body: pv });
  } catch (error) {
    // Saved by an earlier try whose answer was lost: done.
    if (!hasStatus(error, 409)) throw error;
    return;
  }
  postEvent(
    claim,
    context,
    "ProvisioningSucceeded",
    `Successfully provisioned volume ${pv.metadata.name}`,
  );
}

/**
 * A watch whose every event is parsed, reopened from the last resourceVersion
 * seen whenever it ends (kube-apiserver closes a watch that falls behind in a
 * burst), from scratch after a 410; resolves when it is first open.
 */
function watch(
  rest: KubeRest,
  path: string,
  options: { labelSelector?: string; onObject: (type: string, object: unknown) => void },
) {
  const { onObject } = options;
  let resourceVersion: string | undefined;
  return new Promise<void>((opened, failed) => {
    const open = (): void => {
      void rest.stream({
        method: "GET",
        path,
        query: {
          watch: true,
          allowWatchBookmarks: true,
          resourceVersion,
          labelSelector: options.labelSelector,
        },
      }, {
        signal: new AbortController().signal,
        inactivityMs: 3_600_000,
        onOpen: () => opened(),
        onLine: (line) => {
          const parsed = JSON.parse(line) as WatchEvent;
          if (parsed.type === "ERROR") resourceVersion = undefined;
          else resourceVersion = parsed.object.metadata?.resourceVersion ?? resourceVersion;
          if (parsed.type !== "BOOKMARK" && parsed.type !== "ERROR") {
            onObject(parsed.type, parsed.object);
          }
        },
      }).then(open, failed);
    };
    open();
  });
}

interface WatchEvent {
  type: string;
  object: { metadata?: { resourceVersion?: string } };
}

async function connect(options: Map<string, string>, node: string): Promise<Context> {
  const csi = openCsiConnection(options.get("csi-address") ?? "", {
    timeoutMs: 10_000,
    logger: createLogger({ verbosity: 0 }),
  });
  const driver = (await csi.call("GetPluginInfo", {})).name;
  const info = await csi.call("NodeGetInfo", {});
  const topologyKey = Object.keys(info.accessible_topology?.segments ?? {})[0] ?? "";
  const credentials = await loadCredentials({
    kubeconfig: options.get("kubeconfig") ?? "",
    master: "",
    env: process.env,
  });
  const rest = createKubeRest(credentials, {
    userAgent: "per-claim-floor",
    budget: {
      qps: Number(options.get("kube-api-qps") ?? 5),
      burst: Number(options.get("kube-api-burst") ?? 10),
    },
  });
  const list = await rest.request<{ items: FloorClass[] }>({
    method: "GET",
    path: "/apis/storage.k8s.io/v1/storageclasses",
  });
  const classes = new Map(list.items.map((item) => [item.metadata.name, item]));
  return { rest, csi, driver, node, topologyKey, classes };
}

async function main(): Promise<void> {
  const options = flags(process.argv.slice(2));
  if (options.has("version")) {
    // The harness names every binary it measures by its --version line.
    console.log("per-claim floor program (bench/floor/per_claim.ts)");
    return;
  }
  // As the agent: SIGTERM ends it as an exit, on which Bun writes its bytecode order.
  process.on("SIGTERM", () => process.exit(0));
  const node = process.env["NODE_NAME"] ?? "";
  serveHttp(options.get("http-endpoint") ?? "127.0.0.1:0", () => new Response("ok\n"));
  const context = await connect(options, node);
  if (options.has("enable-capacity")) {
    await publishCapacityOnce(context, {
      ...context,
      namespace: process.env["NAMESPACE"] ?? "default",
      classes: context.classes.values(),
    });
  }
  const queue = new ClaimQueue();
  const handled = new Set<string>();
  const claims = watch(context.rest, "/api/v1/persistentvolumeclaims", {
    onObject: (type, object) => {
      const claim = object as ClaimObject;
      if (type === "DELETED" || claim.metadata?.annotations?.[SELECTED_NODE] !== node) return;
      if (claim.spec.volumeName || handled.has(claim.metadata.uid)) return;
      handled.add(claim.metadata.uid);
      queue.push(claim);
    },
  });
  // Only this node's PVs, as the agent's labelled watch (its unlabelled one is empty in a fleet).
  const volumes = watch(context.rest, "/api/v1/persistentvolumes", {
    labelSelector: labelSelector(nodeLabels(context.driver, node)),
    onObject: () => {},
  });
  await Promise.all([claims, volumes]);
  console.error(READY_LINE);
  // One retry rule for every failure: the claim again after a second.
  const retry = (claim: ClaimObject) => setTimeout(() => queue.push(claim), 1_000);
  for (let worker = 0; worker < Number(options.get("worker-threads") ?? 100); worker++) {
    void (async () => {
      for (;;) {
        const claim = await queue.next();
        await provision(claim, context).catch(() => retry(claim));
      }
    })();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
