/**
 * The binaries for the machines nodes run on, each run as an agent on a node
 * of the test cluster until it is ready and has provisioned a claim there:
 *
 * - linux/amd64 (Bun's baseline runtime) under qemu-user emulating a
 *   Nehalem CPU, which has SSE4.2 but no AVX, AVX2 or AVX-512. A C probe
 *   run by the same emulator shows the emulated CPU really lacks AVX2, so the
 *   test cannot pass on this machine's own AVX2.
 * - linux/arm64 under qemu-user, with Debian's arm64 C library (the same
 *   files the arm64 image holds).
 *
 * qemu-user, the arm64 C library and the C compiler are Debian packages,
 * installed when missing.
 */

import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runCommand } from "../../deploy/image/command.ts";
import { crossTools, ensureDebianTools } from "../../deploy/image/debian_packages.ts";
import { binaryCommit } from "../../deploy/image/main.ts";
import {
  binaryPath,
  hostPlatform,
  LINUX_ARM64,
  LINUX_X64,
  type Platform,
} from "../../deploy/image/platforms.ts";
import { NODE_DEPLOYMENT_ARGS } from "../cluster/agents.ts";
import { startCluster } from "../cluster/cluster.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { waitAgentReady } from "../deploy/apply.ts";
import { provisionOn, WORKLOADS } from "../deploy/lifecycle_steps.ts";
import { testImage } from "./image_fixture.ts";

/** A CPU model without AVX and AVX2 (QEMU's name for Intel's 2008 Core i7). */
const NO_AVX2_CPU = "Nehalem";

/** Exit code 0 when the CPU it runs on lacks AVX2, 1 when it has it. */
const AVX2_PROBE = `int main(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? 1 : 0;
}
`;

/** The emulator's command line for a platform's binary. */
function emulated(platform: Platform): string[] {
  return platform === LINUX_X64
    ? [LINUX_X64.qemu, "-cpu", NO_AVX2_CPU]
    : [platform.qemu, "-L", platform.crossSysroot];
}

/** A script that runs the binary under the emulator, for the cluster to start as the agent. */
async function emulatedAgentCommand(cluster: RunningCluster, platform: Platform): Promise<string> {
  const script = join(cluster.dir, `agent-${platform.arch}.sh`);
  const command = [...emulated(platform), join(REPO_ROOT, binaryPath(platform))];
  await Deno.writeTextFile(script, `#!/bin/sh\nexec ${command.join(" ")} "$@"\n`);
  await Deno.chmod(script, 0o755);
  return script;
}

async function emulatedCpuLacksAvx2(dir: string): Promise<boolean> {
  await Deno.writeTextFile(join(dir, "avx2.c"), AVX2_PROBE);
  await runCommand("cc", ["-O2", "-o", join(dir, "avx2"), join(dir, "avx2.c")]);
  const probe = await new Deno.Command(LINUX_X64.qemu, {
    args: ["-cpu", NO_AVX2_CPU, join(dir, "avx2")],
  }).output();
  return probe.code === 0;
}

Deno.test({
  name:
    "the x64 baseline binary without AVX2 and the arm64 binary, both under qemu-user, become ready and provision",
  // The emulators' command lines are written for an x64 machine (CI's).
  ignore: hostPlatform() !== LINUX_X64,
  fn: async () => {
    await ensureDebianTools([
      { provides: LINUX_X64.qemu, package: "qemu-user" },
      ...crossTools(LINUX_ARM64),
      { provides: "cc", package: "gcc" },
    ], { why: "platform binaries test" });
    // The arm64 binary of the image under test (compiled for it).
    const build = await testImage();
    ok(build.platforms.includes(LINUX_ARM64), "the arm64 binary was built");
    strictEqual(await binaryCommit(LINUX_ARM64), build.info.commit);
    const cluster = await startCluster({ nodes: ["node-a", "node-b"] });
    try {
      ok(await emulatedCpuLacksAvx2(cluster.dir), `qemu's ${NO_AVX2_CPU} has no AVX2`);
      await createNamespace(cluster.admin, WORKLOADS);
      const runs: [string, Platform][] = [["node-a", LINUX_X64], ["node-b", LINUX_ARM64]];
      for (const [node, platform] of runs) {
        const httpPort = freeLoopbackPort();
        const agent = await cluster.startAgent(node, {
          kind: "ours",
          binary: await emulatedAgentCommand(cluster, platform),
          args: [...NODE_DEPLOYMENT_ARGS, `--http-endpoint=127.0.0.1:${httpPort}`],
        });
        await waitAgentReady(`http://127.0.0.1:${httpPort}`, { agent, timeoutMs: 120_000 });
        await provisionOn(cluster, `on-${platform.arch}`, { node });
        strictEqual((await agent.stop({ graceMs: 20_000 })).code, 0, `${platform.arch} stops`);
      }
    } catch (error) {
      console.error(await cluster.tailLogs(30));
      throw error;
    } finally {
      await cluster.stop();
    }
  },
});
