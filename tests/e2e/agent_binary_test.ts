/**
 * The compiled binary (dist/csi-node-provisioner, built by `deno task compile`)
 * against the project's test CSI driver running as its own process on a real
 * unix socket, and a real API server (tests/cluster, no nodes needed):
 * start-up handshake, HTTP surface, crash-only exit on driver loss, graceful
 * SIGTERM, and the exit codes of bad input.
 *
 * The test driver: a slow Probe (latency) and a driver without
 * CREATE_DELETE_VOLUME are faults the hostpath driver cannot produce.
 */
import { ok, strictEqual } from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { currentCommit, readBuildInfo } from "../../deploy/image/build_info.ts";
import { BINARY, cleanUp, requireBinary, startAgent, waitReady } from "./agent_process.ts";

Deno.test("the compiled binary against a real driver process and a real API server", async (t) => {
  await using cluster = await startCluster({ nodes: 1, driver: "none", storageClasses: false });
  await t.step(
    "the compiled binary connects to the driver and serves /healthz, /readyz and /metrics",
    async () => {
      const running = await startAgent(cluster);
      try {
        await waitReady(running);
        const health = await fetch(`${running.url}/healthz`);
        strictEqual(health.status, 200, await health.text());
        const metrics = await (await fetch(`${running.url}/metrics`)).text();
        // As upstream, calls before GetPluginInfo answered carry driver_name="unknown-driver".
        const expected = [
          ["unknown-driver", "/csi.v1.Identity/Probe"],
          ["unknown-driver", "/csi.v1.Identity/GetPluginInfo"],
          ["test.csi.k8s.io", "/csi.v1.Node/NodeGetInfo"],
        ];
        for (const [driver, method] of expected) {
          const series =
            `csi_sidecar_operations_seconds_count{driver_name="${driver}",method_name="${method}",grpc_status_code="OK"} 1`;
          ok(metrics.includes(series), `no ${series} in:\n${metrics}`);
        }
        ok(metrics.includes("process_resident_memory_bytes"), "process metrics are exported");
        // klog's text format, the default: the message is quoted after the header.
        ok(running.log().includes('] "Connected to CSI driver'), running.log());
      } finally {
        await cleanUp(running);
      }
    },
  );

  await t.step(
    "the compiled binary takes its token from an exec plugin (client-node, loaded only then)",
    async () => {
      const running = await startAgent(cluster, { kubeconfig: execPluginKubeconfig });
      try {
        // Ready means its informers listed and watched with the plugin's token.
        await waitReady(running);
      } finally {
        await cleanUp(running);
      }
    },
  );

  await t.step("the compiled binary exits 1 when the driver goes away after start-up", async () => {
    const running = await startAgent(cluster);
    try {
      await waitReady(running);
      await running.driver.stop();
      const status = await running.agent.exited;
      strictEqual(status.code, 1, running.log());
      ok(running.log().includes("Lost connection to CSI driver, exiting"), running.log());
    } finally {
      await cleanUp(running);
    }
  });

  await t.step("SIGTERM lets a CSI call in flight finish, then the binary exits 0", async () => {
    const running = await startAgent(cluster);
    try {
      await waitReady(running);
      await running.driver.control.setFault({ method: "Probe", latencyMs: 1500 });
      // The agent's background Probe of the driver (every 10 s) is the call in flight.
      await waitFor(
        async () =>
          (await running.driver.control.calls("Probe")).some((call) => call.code === null),
        { description: "the slow Probe to reach the driver", intervalMs: 20 },
      );
      const started = performance.now();
      running.agent.signal("SIGTERM");
      const status = await running.agent.exited;
      strictEqual(status.code, 0, running.log());
      ok(performance.now() - started >= 1200, "the agent waited for the Probe in flight");
      const probes = await running.driver.control.calls("Probe");
      strictEqual(probes.at(-1)?.code, 0, "the Probe in flight completed with OK");
      ok(running.log().includes('] "Stopped"'), running.log());
    } finally {
      await cleanUp(running);
    }
  });

  await t.step(
    "the compiled binary refuses a driver without CREATE_DELETE_VOLUME with exit code 1",
    async () => {
      const running = await startAgent(cluster, {
        driverOverrides: { controllerCapabilities: ["GET_CAPACITY"] },
      });
      try {
        const status = await running.agent.exited;
        strictEqual(status.code, 1, running.log());
        ok(
          running.log().includes("controller CREATE_DELETE_VOLUME capability is not reported"),
          running.log(),
        );
      } finally {
        await cleanUp(running);
      }
    },
  );
});

Deno.test("the compiled binary lists every bad flag and exits 2", async () => {
  requireBinary();
  const command = new Deno.Command(BINARY, {
    args: ["--node-deployment", "--timeout=never", "--no-such-flag", "--leader-election"],
    env: { NODE_NAME: "" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  });
  const output = await command.output();
  strictEqual(output.code, 2);
  const text = new TextDecoder().decode(output.stderr);
  ok(text.includes('invalid value "never" for flag --timeout'), text);
  ok(text.includes("flag provided but not defined: --no-such-flag"), text);
  ok(
    text.includes("NODE_NAME environment variable must be set when using --node-deployment"),
    text,
  );
  ok(text.includes("--leader-election cannot be used with --node-deployment"), text);
});

Deno.test("the compiled binary prints its version, its commit and its generated help", async () => {
  requireBinary();
  const version = await new Deno.Command(BINARY, { args: ["--version"], stdout: "piped" }).output();
  strictEqual(version.code, 0);
  // The version from package.json and the commit `deno task compile` compiled in.
  const commit = await currentCommit();
  strictEqual(
    new TextDecoder().decode(version.stdout),
    `csi-node-provisioner ${(await readBuildInfo()).version} (commit ${commit})\n`,
  );
  ok(/^[0-9a-f]{40}(-dirty)?$/.test(commit), commit);
  const help = await new Deno.Command(BINARY, { args: ["--help"], stdout: "piped" }).output();
  strictEqual(help.code, 0);
  ok(new TextDecoder().decode(help.stdout).includes("--capacity-ownerref-level int"));
});

/**
 * The token kubeconfig rewritten so that its user runs an exec plugin (a shell
 * script printing an ExecCredential with the same token) instead: the path the
 * agent hands to @kubernetes/client-node, which the binary loads from a chunk
 * of its own only for such kubeconfigs (deploy/image/compile.ts).
 */
function execPluginKubeconfig(tokenKubeconfig: string, dir: string): string {
  const config = JSON.parse(readFileSync(tokenKubeconfig, "utf8"));
  const user = config.users[0].user;
  const credential = {
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: user.token },
  };
  const plugin = join(dir, "credential-plugin.sh");
  writeFileSync(plugin, `#!/bin/sh\nprintf '%s' '${JSON.stringify(credential)}'\n`, {
    mode: 0o700,
  });
  config.users[0].user = {
    exec: {
      apiVersion: "client.authentication.k8s.io/v1",
      command: plugin,
      interactiveMode: "Never",
    },
  };
  const path = join(dir, "exec-kubeconfig");
  writeFileSync(path, JSON.stringify(config));
  return path;
}
