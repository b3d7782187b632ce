/**
 * Upstream external-provisioner's own RBAC (deploy/kubernetes/rbac.yaml of
 * the pinned module, read from the Go module cache), bound to a test
 * identity: the permissions a real deployment grants, not a guess at them.
 */

import { loadAllYaml, type V1ClusterRole, type V1Role } from "@kubernetes/client-node";
import { join } from "node:path";
import { TOOLS_DIR } from "./build.ts";
import { goBinary } from "./go_build.ts";
import { createIfMissing, type IdentityRef, serviceAccountSubject } from "./identity.ts";
import type { AdminClients } from "./kubeconfig.ts";

const PROVISIONER_MODULE = "github.com/kubernetes-csi/external-provisioner/v6";

/** The module's source directory, downloading it from the proxy if needed. */
async function provisionerModuleDir(): Promise<string> {
  const output = await new Deno.Command(goBinary(Deno.env.toObject()), {
    args: ["mod", "download", "-json", PROVISIONER_MODULE],
    cwd: TOOLS_DIR,
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`go mod download ${PROVISIONER_MODULE} failed: ${text}`);
  }
  return (JSON.parse(text) as { Dir: string }).Dir;
}

export interface UpstreamRbac {
  clusterRole: V1ClusterRole;
  /** Namespaced: leases, CSIStorageCapacities, owner lookup. */
  role: V1Role;
  /** The file's text, comments included. */
  text: string;
}

let cached: Promise<UpstreamRbac> | undefined;

/** The ClusterRole and Role from upstream's rbac.yaml (read once per process). */
export function loadUpstreamRbac(): Promise<UpstreamRbac> {
  cached ??= readUpstreamRbac();
  cached.catch(() => (cached = undefined));
  return cached;
}

async function readUpstreamRbac(): Promise<UpstreamRbac> {
  const path = join(await provisionerModuleDir(), "deploy", "kubernetes", "rbac.yaml");
  const text = await Deno.readTextFile(path);
  const documents = loadAllYaml(text) as { kind?: string }[];
  const clusterRole = documents.find((d) => d.kind === "ClusterRole") as V1ClusterRole;
  const role = documents.find((d) => d.kind === "Role") as V1Role;
  if (!clusterRole || !role) throw new Error(`${path} has no ClusterRole or Role`);
  return { clusterRole, role, text };
}

/**
 * Grants `ref` exactly upstream's permissions: the ClusterRole (cluster-wide)
 * and the Role in `ref.namespace`, which is where the agent publishes
 * CSIStorageCapacity objects (its NAMESPACE). Objects are named after the
 * ServiceAccount so several identities can coexist.
 */
export async function grantUpstreamProvisionerRbac(
  admin: AdminClients,
  ref: IdentityRef,
): Promise<void> {
  const { clusterRole, role } = await loadUpstreamRbac();
  const name = `upstream-provisioner:${ref.namespace}:${ref.serviceAccount}`;
  const subjects = [serviceAccountSubject(ref)];
  const roleRef = (kind: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind, name });
  await createIfMissing(() =>
    admin.rbac.createClusterRole({ body: { metadata: { name }, rules: clusterRole.rules ?? [] } })
  );
  await createIfMissing(() =>
    admin.rbac.createClusterRoleBinding({
      body: { metadata: { name }, roleRef: roleRef("ClusterRole"), subjects },
    })
  );
  await createIfMissing(() =>
    admin.rbac.createNamespacedRole({
      namespace: ref.namespace,
      body: { metadata: { name, namespace: ref.namespace }, rules: role.rules ?? [] },
    })
  );
  await createIfMissing(() =>
    admin.rbac.createNamespacedRoleBinding({
      namespace: ref.namespace,
      body: { metadata: { name, namespace: ref.namespace }, roleRef: roleRef("Role"), subjects },
    })
  );
}

/**
 * The patches upstream's rbac.yaml refuses, each with the update the agent
 * falls back to (upstream's own write): refused at most once per agent.
 */
export const UPSTREAM_PATCH_FALLBACKS: ReadonlyMap<string, string> = new Map([
  ["patch persistentvolumeclaims", "update persistentvolumeclaims"],
  [
    "patch snapshot.storage.k8s.io/volumesnapshots",
    "update snapshot.storage.k8s.io/volumesnapshots",
  ],
]);
