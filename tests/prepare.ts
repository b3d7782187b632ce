/**
 * Everything the tests need that is not in the repository, built or found:
 * the compiled agent (dist/csi-node-provisioner), the real Kubernetes
 * components of tests/cluster and helm for deploy/helm (both built once from
 * the Go module proxy), and the upstream CSI peers (hostpathplugin,
 * snapshot-controller, csi-snapshotter, built once from their vendored
 * archives in ../shared/peers) and democratic-csi (its archive, with its
 * npm dependencies), all cached outside the repository.
 * `deno task test` runs this before `deno test`.
 */
import { ensureClusterBinaries } from "./cluster/build.ts";
import { ensureDemocratic } from "./cluster/democratic_install.ts";
import { ensureHelm } from "./cluster/helm_build.ts";
import { ensurePeerBinaries } from "./cluster/peers.ts";

async function compileAgent(): Promise<void> {
  const started = performance.now();
  const output = await new Deno.Command("node_modules/.bin/deno", {
    args: ["task", "compile"],
    cwd: new URL("..", import.meta.url),
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error("deno task compile failed");
  console.log(`prepare: agent compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.main) {
  await compileAgent();
  const binaries = await ensureClusterBinaries();
  console.log(
    `prepare: cluster binaries ready in ${binaries.kubeApiserver.replace(/\/[^/]+$/, "")}`,
  );
  console.log(`prepare: helm ready at ${await ensureHelm()}`);
  const peers = await ensurePeerBinaries();
  console.log(`prepare: CSI peers ready in ${peers.hostpathplugin!.replace(/\/[^/]+$/, "")}/..`);
  console.log(`prepare: democratic-csi ready at ${(await ensureDemocratic()).bin}`);
}
