/**
 * The compiled binary as a kubectl plugin, run by the real kubectl: a file
 * named kubectl-csi_node_provisioner on PATH makes `kubectl
 * csi-node-provisioner` explain, with kubectl's kubeconfig rules: a
 * KUBECONFIG list whose context is in the second file, the context's
 * namespace, --context, and -n over the context's namespace.
 *
 * The claim names a StorageClass that does not exist, so its verdict needs
 * no driver and no agent: a control plane alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { oursBinary } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { type CommandResult, runCapturing } from "../cluster/process.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { claimObject } from "../cluster/workloads.ts";
import { step } from "./support.ts";

const NS = "plugin-team";
const CLAIM = "data";
const VERDICT = 'Pending: StorageClass "no-such-class" does not exist';
const PLUGIN = "kubectl-csi_node_provisioner";

/** Runs a command with only PATH (the plugin's directory first), HOME and the given environment. */
async function run(
  command: string,
  args: string[],
  options: { bin: string; home: string; env?: Record<string, string> },
): Promise<CommandResult> {
  return await runCapturing(command, args, {
    PATH: `${options.bin}:${Deno.env.get("PATH") ?? ""}`,
    HOME: options.home,
    ...options.env,
  });
}

/**
 * Two kubeconfigs as KUBECONFIG would list them: the first has a context of
 * an API server that does not answer, the second the cluster's admin in a
 * context whose namespace is NS.
 */
async function writeKubeconfigs(
  cluster: RunningCluster,
  dir: string,
  firstCurrent: string,
): Promise<string> {
  const admin = JSON.parse(await Deno.readTextFile(cluster.kubeconfigPath));
  const first = join(dir, `first-${firstCurrent || "unset"}`);
  await Deno.writeTextFile(
    first,
    JSON.stringify({
      ...(firstCurrent === "" ? {} : { "current-context": firstCurrent }),
      contexts: [{ name: "elsewhere", context: { cluster: "nowhere", user: "nobody" } }],
      clusters: [{ name: "nowhere", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "nobody", user: { token: "unused" } }],
    }),
  );
  const second = join(dir, "second");
  await Deno.writeTextFile(
    second,
    JSON.stringify({
      "current-context": "team",
      contexts: [{ name: "team", context: { cluster: "test", user: "admin", namespace: NS } }],
      clusters: [{ name: "test", cluster: admin.clusters[0].cluster }],
      users: [{ name: "admin", user: admin.users[0].user }],
    }),
    { mode: 0o600 },
  );
  return `${first}:${second}`;
}

function assertVerdict(result: CommandResult): void {
  assert.equal(result.code, 0, `exit code; stderr: ${result.stderr}`);
  assert.equal(result.stderr, "");
  assert.equal(result.stdout.split("\n")[0], VERDICT, result.stdout);
  assert.match(result.stdout, new RegExp(`\\nClaim ${NS}/${CLAIM}:\\n`));
}

Deno.test("kubectl csi-node-provisioner: the binary as a kubectl plugin, kubectl's kubeconfig rules", async (t) => {
  await using cluster = await startCluster({
    nodes: [],
    driver: "none",
    storageClasses: false,
    log: () => {},
  });
  const dir = await Deno.makeTempDir({ prefix: "explain-plugin-" });
  try {
    const bin = join(dir, "bin");
    const home = join(dir, "home");
    await Deno.mkdir(bin);
    await Deno.mkdir(home);
    await Deno.symlink(oursBinary(), join(bin, PLUGIN));
    await cluster.admin.core.createNamespace({ body: { metadata: { name: NS } } });
    await cluster.admin.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: claimObject(CLAIM, { storageClass: "no-such-class", size: "1Gi" }),
    });
    const kubectl = cluster.binaries.kubectl;
    const secondOnly = await writeKubeconfigs(cluster, dir, "");
    const firstWins = await writeKubeconfigs(cluster, dir, "elsewhere");
    // null: no KUBECONFIG at all (undefined would take the default).
    const plugin = (args: string[], kubeconfig: string | null = secondOnly) =>
      run(kubectl, ["csi-node-provisioner", ...args], {
        bin,
        home,
        env: kubeconfig === null ? {} : { KUBECONFIG: kubeconfig },
      });

    await step(t, cluster, "kubectl finds the plugin by its file name", async () => {
      const listed = await run(kubectl, ["plugin", "list"], { bin, home });
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(`^${join(bin, PLUGIN)}$`, "m"));
    });

    await step(
      t,
      cluster,
      "KUBECONFIG=a:b: the current context from b, and its namespace",
      async () => {
        assertVerdict(await plugin(["explain", CLAIM]));
        // Without the word explain, too.
        assertVerdict(await plugin([CLAIM]));
      },
    );

    await step(
      t,
      cluster,
      "the first file's current-context wins; --context picks the other",
      async () => {
        const wrong = await plugin(["explain", CLAIM], firstWins);
        assert.equal(wrong.code, 1, wrong.stdout);
        assert.match(
          wrong.stderr,
          /^kubectl csi-node-provisioner explain: cannot reach the API server at https:\/\/127\.0\.0\.1:1: /,
        );
        assertVerdict(await plugin(["explain", "--context", "team", CLAIM], firstWins));
        assertVerdict(await plugin(["--context=team", `${NS}/${CLAIM}`], firstWins));
      },
    );

    await step(t, cluster, "-n is used over the context's namespace", async () => {
      const elsewhere = await plugin(["explain", "-n", "default", CLAIM]);
      assert.equal(elsewhere.code, 1, elsewhere.stdout);
      assert.equal(
        elsewhere.stderr,
        `kubectl csi-node-provisioner explain: PersistentVolumeClaim "${CLAIM}" not found in namespace "default"\n`,
      );
      assertVerdict(await plugin(["explain", "-n", NS, CLAIM]));
    });

    await step(t, cluster, "--help is the plugin's usage; the agent never starts", async () => {
      const help = await plugin(["--help"]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(
        help.stdout,
        /^Usage: kubectl csi-node-provisioner explain \[-n NAMESPACE\] \[flags\] \[NAMESPACE\/\]CLAIM\n {7}kubectl csi-node-provisioner \[-n NAMESPACE\]/,
      );
      assert.match(help.stdout, /\n {2}--context NAME /);
      const agentFlag = await plugin(["--node-deployment"]);
      assert.equal(agentFlag.code, 2, agentFlag.stdout);
      assert.equal(
        agentFlag.stderr,
        "kubectl csi-node-provisioner explain: unknown flag --node-deployment " +
          "(see kubectl csi-node-provisioner explain --help)\n",
      );
    });

    await step(t, cluster, "without KUBECONFIG, ~/.kube/config", async () => {
      const none = await plugin(["explain", CLAIM], null);
      assert.equal(none.code, 1, none.stdout);
      assert.match(none.stderr, /: no Kubernetes configuration: /);
      await Deno.mkdir(join(home, ".kube"));
      await Deno.copyFile(join(dir, "second"), join(home, ".kube", "config"));
      assertVerdict(await plugin(["explain", CLAIM], null));
    });

    await step(t, cluster, "the release's file name, run directly, is the plugin too", async () => {
      const released = join(bin, `${PLUGIN}-linux-amd64`);
      await Deno.symlink(oursBinary(), released);
      const result = await run(released, [`${NS}/${CLAIM}`], {
        bin,
        home,
        env: { KUBECONFIG: secondOnly },
      });
      assertVerdict(result);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
