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
import { isDeepStrictEqual } from "node:util";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { createInputs, NAMESPACE, ROUNDS, SECRET_VALUES } from "./differential_inputs.ts";
import { provisionClaim, type Provisioned } from "./differential_support.ts";
import { describeDifference } from "./object_diff.ts";
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

/** Every difference between what the two agents produced for one claim, or nothing. */
function compare(ours: Provisioned, upstream: Provisioned): Promise<void> {
  const names = { expectedName: "upstream", actualName: "ours" };
  const differences = [
    describeDifference(ours.pv, upstream.pv, { what: "the PVs", ...names }),
    describeDifference(ours.request, upstream.request, {
      what: "the CreateVolume requests",
      ...names,
    }),
    describeDifference(withoutLocations(ours.events), upstream.events, {
      what: "the claim's Events",
      ...names,
    }),
  ].filter((difference) => difference !== "");
  if (!isDeepStrictEqual(ours.secrets, upstream.secrets)) {
    // The keys only: secret values never reach a log.
    const keys = (secrets: Record<string, string> | undefined) =>
      JSON.stringify(Object.keys(secrets ?? {}).sort());
    differences.push(
      `the provisioner secrets of the CreateVolume requests differ (values not shown): ` +
        `ours has keys ${keys(ours.secrets)}, upstream ${keys(upstream.secrets)}`,
    );
  }
  if (differences.length > 0) return Promise.reject(new Error(differences.join("\n\n")));
  return Promise.resolve();
}

/**
 * Our messages without the location this agent appends on purpose to
 * upstream's text (lib/model/messages.ts), e.g. ` (PersistentVolumeClaim
 * "ns/name", spec.selector)`: the rest must be upstream's wording.
 */
function withoutLocations(events: Provisioned["events"]): Provisioned["events"] {
  const location = / \((?:PersistentVolumeClaim|StorageClass) "[^"]+", [^()]+\)$/;
  return events.map((event) => ({ ...event, message: event.message.replace(location, "") }));
}

/** Deletes the claims and waits until they are gone, so that new ones can take their names. */
async function deleteClaims(cluster: RunningCluster, names: string[]): Promise<void> {
  const { core } = cluster.admin;
  for (const name of names) {
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name });
  }
  await waitFor(async () => {
    const list = await core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
    return list.items.length === 0;
  }, { description: `the claims in ${NAMESPACE} deleted` });
}
