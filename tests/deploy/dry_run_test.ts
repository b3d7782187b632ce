/**
 * The rendered manifests against the real schemas: a server-side dry-run
 * apply of `kubectl kustomize deploy`, of examples/hostpath and of `helm
 * template` (defaults and other value sets) on a tests/cluster API server, which validates every
 * field, the admission plugins (Pod Security, priority classes, service
 * accounts) and RBAC's escalation checks, without creating anything.
 */

import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { applyObjects, dryRunAccepted, startValidationCluster } from "./apply.ts";
import { EXAMPLE_DIR, renderHelm, renderKustomize, theObject } from "./render.ts";

const VALUE_SETS: string[][] = [
  [],
  ["capacity.ownerMode=daemonset", "rbac.secrets=true", "extraArgs={--extra-create-metadata}"],
  ["capacity.enabled=false", "metrics.enabled=false", "namespace.create=true"],
  ["exampleDriver.enabled=true", "tolerations[0].operator=Exists"],
  [
    "priorityClassQuota.enabled=true",
    `image.digest=sha256:${"0".repeat(64)}`,
    "updateStrategy.rollingUpdate.maxUnavailable=25%",
    "driver.socketDir=/var/lib/kubelet/plugins/example.com",
  ],
];

Deno.test("the API server accepts every rendered object (server-side dry run)", async () => {
  const binaries = await ensureClusterBinaries();
  const helm = await ensureHelm();
  const base = (await renderKustomize(binaries.kubectl)).objects;
  await using cluster = await startValidationCluster(binaries);
  // Namespaced objects need their namespace to exist, even in a dry run.
  await applyObjects(cluster, [theObject(base, "Namespace")]);
  await dryRunAccepted(cluster, base);
  await dryRunAccepted(cluster, (await renderKustomize(binaries.kubectl, EXAMPLE_DIR)).objects);
  for (const set of VALUE_SETS) {
    await dryRunAccepted(cluster, (await renderHelm(helm, { set })).objects);
  }
});
