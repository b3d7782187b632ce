/**
 * Differential test on the upstream hostpath driver: the same StorageClasses
 * and claims, provisioned once by upstream csi-provisioner and once by this
 * agent on the same node with the same flags, must give the same PVs, the
 * same CreateVolume requests (as the driver got them, through the recording
 * proxy) and the same Events, but for what necessarily differs (names, UIDs,
 * versions, times, volume ids), normalized field by field below. Each round
 * of flags (differential_inputs.ts) runs both agents in turn.
 *
 * Each claim is created again under the same name in the same namespace, so
 * that everything derived from the claim's name and namespace must match too.
 * The provisioner secrets the requests carried are compared, never printed.
 */
import assert from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { createInputs, ROUNDS, SECRET_VALUES } from "./differential_inputs.ts";
import { compare, deleteClaims, provisionClaim, type Provisioned } from "./differential_support.ts";
import { step } from "./support.ts";

Deno.test("upstream csi-provisioner and this agent provision the same PVs on the hostpath driver", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driverOptions: {
      capacity: { fast: "20Gi" },
      recordCalls: true,
      extraArgs: ["--enable-controller-modify-volume"],
    },
    storageCapacity: false,
    storageClasses: false,
  });
  await createInputs(cluster);

  let failed = false;
  for (const round of ROUNDS) {
    const results: Record<"upstream" | "ours", Provisioned[]> = { upstream: [], ours: [] };
    for (const kind of ["upstream", "ours"] as const) {
      await step(t, cluster, `${round.name}: ${kind} provisions the claims`, async () => {
        // cluster-admin, not upstream's rbac.yaml: a class names a provisioner Secret.
        const agent = await cluster.startAgent("node-a", {
          kind,
          rbac: "cluster-admin",
          args: round.args,
        });
        const reference = kind === "ours" ? results.upstream : [];
        results[kind] = await Promise.all(
          round.claims.map((claim, index) =>
            provisionClaim(cluster, claim, reference[index]?.events ?? [])
          ),
        );
        await agent.stop();
        await deleteClaims(cluster, round.claims.map((claim) => claim.name));
      });
    }
    for (const [index, { name }] of round.claims.entries()) {
      const title = `${round.name}: claim ${name}: same PV, CreateVolume request and Events`;
      const passed = await t.step(
        title,
        () => compare(results.ours[index]!, results.upstream[index]!),
      );
      failed ||= !passed;
    }
  }
  if (failed) console.error(await cluster.tailLogs(30));
  await step(
    t,
    cluster,
    "no secret value in any log (agents, drivers, control plane)",
    async () => {
      const leaks: string[] = [];
      for (const { logFile } of cluster.logs()) {
        const text = await Deno.readTextFile(logFile);
        if (SECRET_VALUES.some((value) => text.includes(value))) leaks.push(logFile);
      }
      assert.deepEqual([...new Set(leaks)], []);
    },
  );
});
