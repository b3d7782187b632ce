import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCapacity, parseCli } from "./main.ts";
import { NODE_DEPLOYMENT_ARGS } from "./agents.ts";
import { withTimeout } from "./wait.ts";

Deno.test("parseCli reads the standalone flags, with or without a leading --", () => {
  const cli = parseCli([
    "--",
    "--nodes",
    "3",
    "--agent",
    "upstream",
    "--agent-args",
    " --enable-capacity  -v=5 ",
    "--capacity",
    "fast=1Gi,slow=2Gi",
    "--dir",
    "/tmp/x",
  ]);
  assert.equal(cli.nodes, 3);
  assert.equal(cli.driver, "hostpath");
  assert.equal(cli.snapshots, false);
  assert.equal(cli.agent, "upstream");
  assert.deepEqual(cli.agentArgs, ["--enable-capacity", "-v=5"]);
  assert.deepEqual(cli.capacity, { fast: "1Gi", slow: "2Gi" });
  assert.equal(cli.dir, "/tmp/x");
  assert.equal(parseCli([]).agent, "none");
  assert.equal(parseCli(["--driver", "test", "--snapshots"]).driver, "test");
  assert.equal(parseCli(["--driver", "democratic"]).driver, "democratic");
  assert.equal(parseCli(["--snapshots"]).snapshots, true);
});

Deno.test("parseCli rejects unknown kinds and bad counts", () => {
  assert.throws(
    () => parseCli(["--agent", "theirs"]),
    /--agent must be one of none, ours, upstream/,
  );
  assert.throws(() => parseCli(["--nodes", "0"]), /--nodes must be a positive integer/);
  assert.throws(() => parseCapacity("fast"), /pool=size/);
});

/** Collects a stream's text; `seen(text)` resolves once the text has appeared. */
function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  const waiters: { needle: string; resolve: () => void }[] = [];
  const done = (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      for (const waiter of waiters) if (text.includes(waiter.needle)) waiter.resolve();
    }
  })();
  const seen = (needle: string) =>
    new Promise<void>((resolve) => {
      if (text.includes(needle)) return resolve();
      waiters.push({ needle, resolve });
    });
  return { seen, done, text: () => text };
}

Deno.test("standalone: cluster ready, cluster.json, kubectl, and a clean SIGTERM", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cluster-standalone-" });
  const main = fileURLToPath(new URL("./main.ts", import.meta.url));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      main,
      "--nodes",
      "2",
      "--agent",
      "upstream",
      "--agent-args",
      NODE_DEPLOYMENT_ARGS.join(" "),
      "--snapshots",
      "--dir",
      dir,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  try {
    const exitedEarly = child.status.then((status) => {
      throw new Error(`exited before it was ready, code ${status.code}`);
    });
    exitedEarly.catch(() => {}); // Also rejects at the normal exit below.
    await withTimeout(Promise.race([stdout.seen("cluster ready\n"), exitedEarly]), {
      timeoutMs: 120_000,
      description: "cluster ready",
    });
    assert.match(stdout.text(), /get nodes,csidrivers,csinodes/);
    assert.match(stdout.text(), /started in [\d.]+ s\ncluster ready\n$/);
    const description = JSON.parse(await Deno.readTextFile(join(dir, "cluster.json")));
    assert.equal(description.kubeconfig, join(dir, "kubeconfig"));
    assert.deepEqual(description.nodes.map((node: { name: string }) => node.name), [
      "node-a",
      "node-b",
    ]);
    assert.equal(description.driverName, "hostpath.csi.k8s.io");
    assert.equal(description.topologyKey, "topology.hostpath.csi/node");
    for (const node of description.nodes) {
      assert.equal(node.agent.kind, "upstream");
      assert.equal(existsSync(`/proc/${node.agent.pid}`), true);
      assert.equal(node.csiEndpoint, `unix://${dir}/nodes/${node.name}/csi.sock`);
      assert.equal(node.controlEndpoint, null, "hostpath has no control API");
      assert.equal(node.stateDir, `${dir}/nodes/${node.name}/state`);
      assert.equal(existsSync(`/proc/${node.driver.pid}`), true);
      assert.equal(node.driver.logFile, `${dir}/logs/csi-driver-${node.name}.log`);
      assert.equal(existsSync(`/proc/${node.snapshotter.pid}`), true);
    }
    const kubectl = await new Deno.Command(description.kubectl, {
      args: [
        "--kubeconfig",
        description.kubeconfig,
        "get",
        "nodes,csidrivers,csinodes,volumesnapshotclasses",
        "-o",
        "name",
      ],
    }).output();
    assert.equal(
      new TextDecoder().decode(kubectl.stdout),
      "node/node-a\nnode/node-b\ncsidriver.storage.k8s.io/hostpath.csi.k8s.io\n" +
        "csinode.storage.k8s.io/node-a\ncsinode.storage.k8s.io/node-b\n" +
        "volumesnapshotclass.snapshot.storage.k8s.io/csi-hostpath-snapclass\n",
    );
    child.kill("SIGTERM");
    const status = await withTimeout(child.status, {
      timeoutMs: 60_000,
      description: "exit after SIGTERM",
    });
    assert.equal(status.code, 0, stderr.text());
    for (const process of description.processes) {
      assert.equal(existsSync(`/proc/${process.pid}`), false, process.name);
    }
  } catch (error) {
    console.error(stderr.text());
    throw error;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await Promise.all([stdout.done, stderr.done]);
    await Deno.remove(dir, { recursive: true });
  }
});
