/**
 * The compiled binary's health surface against a real driver process and a
 * real API server: liveness stays the agent's own while the driver is slow,
 * readiness says why and comes back by itself, and a broken kubeconfig is a
 * clear exit 2 that prints none of the file.
 *
 * The test driver, because only it can answer Probe slowly while every other
 * call stays fast: the hostpath driver has no latency fault, and freezing it
 * (SIGSTOP) would hang the handshake and every call, not just Probe.
 */
import { ok, strictEqual } from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { spawnTestDriver } from "../csi_driver/spawn.ts";
import { PROBES } from "../../lib/http/health.ts";
import { BINARY, cleanUp, requireBinary, startAgent, waitReady } from "./agent_process.ts";

/** GET with the kubelet's probe timeout; the status, or why it failed, and how long it took. */
async function probe(url: string): Promise<{ status: number | string; ms: number; body: string }> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(PROBES.liveness.timeoutSeconds * 1000),
    });
    return {
      status: response.status,
      ms: performance.now() - started,
      body: await response.text(),
    };
  } catch (error) {
    return { status: (error as Error).name, ms: performance.now() - started, body: "" };
  }
}

Deno.test("a driver that answers Probe in 8 s: /healthz stays 200 within the probe timeout, /readyz says why and recovers", async () => {
  await using cluster = await startCluster({ nodes: 1, driver: "none", storageClasses: false });
  const running = await startAgent(cluster);
  try {
    await waitReady(running);
    await running.driver.control.setFault({ method: "Probe", latencyMs: 8000 });
    // Until the agent's background Probe (every 10 s, 5 s deadline) has failed, /healthz is
    // asked every 200 ms: it must answer 200 within the kubelet's timeout every time.
    const answers: { status: number | string; ms: number }[] = [];
    const notReady = await waitFor(async () => {
      answers.push(await probe(`${running.url}/healthz`));
      const ready = await probe(`${running.url}/readyz`);
      return ready.status === 503 ? ready.body : undefined;
    }, { description: "/readyz to fail on the slow Probe", timeoutMs: 30_000, intervalMs: 200 });
    ok(notReady.includes("csi: CSI driver did not answer Probe within 5 s"), notReady);
    // Liveness all along, and after the failure too.
    for (let i = 0; i < 10; i++) answers.push(await probe(`${running.url}/healthz`));
    const failed = answers.filter((answer) => answer.status !== 200);
    strictEqual(failed.length, 0, `liveness failed: ${JSON.stringify(failed)}`);
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    ok(slowest < PROBES.liveness.timeoutSeconds * 1000, `slowest /healthz ${slowest} ms`);
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    ok(metrics.includes("csi_node_provisioner_driver_ready 0"), "the gauge says it");
    ok(metrics.includes('csi_node_provisioner_ready{condition="csi"} 0'), "per condition");
    ok(running.log().includes('"CSI driver is not healthy"'), running.log());
    ok(/"Readiness condition failed" .*condition="csi"/.test(running.log()), running.log());
    // The driver is fast again: readiness comes back by itself, and says so.
    await running.driver.control.clearFaults("Probe");
    await waitReady(running);
    ok(running.log().includes('"CSI driver answers Probe again"'), running.log());
    const back = running.log().split('"Readiness condition failed"')[1] ?? "";
    ok(/"Readiness condition met" .*condition="csi"/.test(back), running.log());
    strictEqual(running.agent.running, true, "the agent was never restarted nor exited");
  } catch (error) {
    console.error(running.log());
    throw error;
  } finally {
    await cleanUp(running);
  }
});

Deno.test("a broken kubeconfig with a token in it: exit 2, the file and the problem named, the token nowhere", async () => {
  requireBinary();
  const dir = mkdtempSync(join(tmpdir(), "agent-kubeconfig-"));
  const driver = await spawnTestDriver({
    endpoint: `unix://${join(dir, "csi.sock")}`,
    controlEndpoint: `unix://${join(dir, "control.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "10Gi" }],
  });
  try {
    const token = "eyJhbGciOiJSUzI1NiJ9.planted-secret-token.c2lnbmF0dXJl";
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nusers:\n- name: agent\n  user:\n    token: ${token}\n   oops: [\n`,
    );
    // The agent writes its last words to /dev/termination-log: a file of this test's own,
    // bound over that path in a mount namespace of the agent's own.
    const terminationLog = join(dir, "termination-log");
    writeFileSync(terminationLog, "");
    if (!existsSync("/dev/termination-log")) writeFileSync("/dev/termination-log", "");
    const script = 'mount --bind "$1" /dev/termination-log && shift && exec "$@"';
    const output = await new Deno.Command("unshare", {
      args: [
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        terminationLog,
        BINARY,
        "--node-deployment",
        `--csi-address=${join(dir, "csi.sock")}`,
        `--kubeconfig=${kubeconfig}`,
      ],
      env: { NODE_NAME: "node-a" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    const last = readFileSync(terminationLog, "utf8");
    strictEqual(output.code, 2, stderr);
    const problem = `kubeconfig ${kubeconfig}: is not valid YAML or JSON (`;
    ok(stderr.includes(problem), stderr);
    ok(last.startsWith(problem), last);
    ok(!stderr.includes(token) && !stderr.includes("planted-secret"), "the token is not in stderr");
    ok(!last.includes(token) && !last.includes("planted-secret"), "nor in the termination log");
  } finally {
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
