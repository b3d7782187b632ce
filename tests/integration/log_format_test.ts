/**
 * The logs of this agent and of upstream csi-provisioner, from the same
 * cluster, at the same verbosity, for the same claim (provisioned, then
 * deleted), in klog's text and JSON formats: a pipeline that reads
 * upstream's lines reads ours. And with a provisioner Secret at -v=10, the
 * Secret's values appear in neither format.
 */
import assert from "node:assert/strict";
import { NODE_DEPLOYMENT_ARGS } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import {
  jsonRecords,
  leadingKeys,
  structuredBody,
  type TextRecord,
  textRecords,
} from "./klog_lines.ts";
import { selectedClaim, step, waitForReady } from "./support.ts";

const NAMESPACE = "log-shape";
const CLASS = "log-shape";
const SECRET_CLASS = "log-shape-secret";
const SECRET_VALUE = "pa55-w0rd-in-a-secret";
const CLAIM = "data";
const VERBOSITY = "-v=5";

type Format = "text" | "json";

interface AgentRun {
  pid: number;
  log: string;
  /** When the agent was started and stopped, in ms since the epoch. */
  window: [number, number];
}

Deno.test("this agent's log lines have upstream csi-provisioner's shape, in text and json", async (t) => {
  await using cluster = await startCluster({ nodes: ["node-a"], storageClasses: false });
  await createInputs(cluster);
  for (const format of ["text", "json"] as const) {
    const runs: Partial<Record<"upstream" | "ours", AgentRun>> = {};
    for (const kind of ["upstream", "ours"] as const) {
      await step(
        t,
        cluster,
        `${kind}, --logging-format=${format}: provision and delete`,
        async () => {
          runs[kind] = await provisionAndDelete(cluster, {
            kind,
            args: [...NODE_DEPLOYMENT_ARGS, VERBOSITY, `--logging-format=${format}`],
            claim: CLAIM,
            storageClass: CLASS,
          });
        },
      );
    }
    await step(t, cluster, `--logging-format=${format}: the same shape`, () => {
      const { upstream, ours } = runs as Record<"upstream" | "ours", AgentRun>;
      if (format === "text") compareText(upstream, ours);
      else compareJson(upstream, ours);
      return Promise.resolve();
    });
  }
  for (const format of ["text", "json"] as const) {
    await step(
      t,
      cluster,
      `-v=10, --logging-format=${format}: no Secret value in the log`,
      async () => {
        const run = await provisionAndDelete(cluster, {
          kind: "ours",
          args: [...NODE_DEPLOYMENT_ARGS, "-v=10", `--logging-format=${format}`],
          claim: `secret-${format}`,
          storageClass: SECRET_CLASS,
        });
        assert.ok(run.log.includes("CreateVolume"), "the CSI call is logged at -v=10");
        assert.ok(!run.log.includes(SECRET_VALUE), run.log);
      },
    );
  }
});

async function createInputs(cluster: RunningCluster): Promise<void> {
  await createNamespace(cluster.admin, NAMESPACE);
  await cluster.admin.core.createNamespacedSecret({
    namespace: NAMESPACE,
    body: { metadata: { name: "creds" }, stringData: { password: SECRET_VALUE } },
  });
  for (const [name, secret] of [[CLASS, false], [SECRET_CLASS, true]] as const) {
    await cluster.admin.storage.createStorageClass({
      body: {
        metadata: { name },
        provisioner: cluster.driverName,
        parameters: {
          kind: "fast",
          ...(secret
            ? {
              "csi.storage.k8s.io/provisioner-secret-name": "creds",
              "csi.storage.k8s.io/provisioner-secret-namespace": NAMESPACE,
            }
            : {}),
        },
        reclaimPolicy: "Delete",
        volumeBindingMode: "WaitForFirstConsumer",
      },
    });
  }
}

/** Starts the agent, provisions the claim, deletes it and waits until its PV is gone. */
async function provisionAndDelete(
  cluster: RunningCluster,
  options: { kind: "upstream" | "ours"; args: string[]; claim: string; storageClass: string },
): Promise<AgentRun> {
  // Every start on a node appends to one file: remember where this start begins.
  const logFile = `${cluster.dir}/logs/agent-node-a.log`;
  const offset = await Deno.stat(logFile).then((stat) => stat.size, () => 0);
  const started = Date.now();
  const port = freeLoopbackPort();
  const agent = await cluster.startAgent("node-a", {
    kind: options.kind,
    rbac: "cluster-admin",
    args: [...options.args, `--http-endpoint=127.0.0.1:${port}`],
  });
  assert.equal(agent.logFile, logFile, "the harness's log file of the node's agent");
  if (options.kind === "ours") await waitForReady(`http://127.0.0.1:${port}`);
  const ref = { namespace: NAMESPACE, name: options.claim };
  const { core } = cluster.admin;
  await core.createNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    body: selectedClaim(options.claim, {
      node: "node-a",
      storageClass: options.storageClass,
      driverName: cluster.driverName,
    }),
  });
  const bound = await waitForClaimBound(cluster.admin, ref);
  await core.deleteNamespacedPersistentVolumeClaim(ref);
  const pv = bound.spec!.volumeName!;
  await waitFor(async () => {
    const list = await core.listPersistentVolume();
    return !list.items.some((item) => item.metadata?.name === pv);
  }, { description: `PV ${pv} deleted by ${options.kind}`, timeoutMs: 60_000 });
  const pid = agent.pid;
  await agent.stop();
  const bytes = await Deno.readFile(logFile);
  return {
    pid,
    log: new TextDecoder().decode(bytes.subarray(offset)),
    window: [started, Date.now()],
  };
}

/** The agent's own records: the harness's restart markers are not its output. */
function ownText(run: AgentRun): TextRecord[] {
  const { records, strays } = textRecords(run.log);
  const foreign = strays.filter((line) => !line.startsWith("===== cluster:"));
  assert.deepEqual(foreign, [], "every line is a klog record or a continuation of one");
  return records;
}

function compareText(upstream: AgentRun, ours: AgentRun): void {
  for (const [name, run] of [["upstream", upstream], ["ours", ours]] as const) {
    const records = ownText(run);
    assert.ok(records.length > 0, `${name}: no log lines`);
    for (const record of records) {
      assert.equal(record.pid, run.pid, `${name}: the header's pid`);
      assert.match(record.severity, /^[IWEF]$/);
    }
    assert.ok(records.some((record) => record.body.includes(CLAIM)), `${name}: the claim`);
  }
  const structured = (run: AgentRun) =>
    ownText(run).map((record) => [record, structuredBody(record.body)] as const);
  // Every line of ours is structured; upstream's structured lines parse the same way.
  for (const [record, parsed] of structured(ours)) {
    assert.ok(parsed !== undefined, `ours: not "msg" key=value: ${record.body}`);
  }
  const upstreamStructured = structured(upstream).filter(([, parsed]) => parsed !== undefined);
  assert.ok(upstreamStructured.length > 0, "upstream writes structured lines too");
  const keyForms = (run: AgentRun) =>
    new Set(
      structured(run).flatMap(([, parsed]) =>
        (parsed?.pairs ?? []).map(([, value]) => valueForm(value))
      ),
    );
  // The value notations upstream uses are the ones ours uses.
  for (const form of keyForms(ours)) {
    assert.ok(["quoted", "json", "block"].includes(form), form);
  }
  assert.ok(keyForms(upstream).has("quoted"));
}

function valueForm(value: string): string {
  if (value.startsWith("<\n")) return "block";
  return value.startsWith('"') ? "quoted" : "json";
}

function compareJson(upstream: AgentRun, ours: AgentRun): void {
  const leading = new Map<string, Set<string>>();
  for (const [name, run] of [["upstream", upstream], ["ours", ours]] as const) {
    const { records, strays } = jsonRecords(run.log);
    assert.deepEqual(strays.filter((line) => !line.startsWith("===== cluster:")), [], name);
    assert.ok(records.length > 0, `${name}: no log lines`);
    for (const record of records) {
      const ts = record["ts"];
      // Milliseconds since the epoch, within the run.
      assert.equal(typeof ts, "number", `${name}: ts ${JSON.stringify(record)}`);
      assert.ok((ts as number) >= run.window[0] - 1 && (ts as number) <= run.window[1] + 1);
      assert.equal(typeof record["msg"], "string", name);
      const v = record["v"];
      assert.ok(v === undefined || (Number.isInteger(v) && (v as number) <= 5), `${name}: v ${v}`);
      // An error's text; null where a call logs a nil error as a pair (upstream's "GRPC response").
      const err = record["err"];
      assert.ok(err === undefined || err === null || typeof err === "string", name);
      assert.equal(Object.keys(record)[0], "ts", name);
      leading.set(name, (leading.get(name) ?? new Set()).add(leadingKeys(record).join(",")));
    }
    assert.ok(
      records.some((record) => JSON.stringify(record).includes(CLAIM)),
      `${name}: the claim`,
    );
    assert.ok(records.some((record) => record["v"] === 0), `${name}: lines at V(0)`);
  }
  // Both put ts, then the logger's name if any, then msg ("caller", which
  // only upstream has, aside) before the key/value pairs.
  for (const form of leading.get("ours")!) {
    assert.ok(["ts,msg", "ts,logger,msg"].includes(form), form);
  }
  assert.ok(leading.get("upstream")!.has("ts,msg"));
}
