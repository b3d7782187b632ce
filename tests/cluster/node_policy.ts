/**
 * The node confinement of deploy/components/node-confinement on the test
 * cluster: each agent's token is bound to a Pod on its node, as the kubelet's
 * projected token is, and the component's ValidatingAdmissionPolicy is
 * applied with its matchCondition naming the test's agent accounts.
 */

import { join } from "node:path";
import { REPO_ROOT } from "./drivers.ts";
import { createIfMissing, ensureServiceAccount, type IdentityRef } from "./identity.ts";
import type { AdminClients } from "./kubeconfig.ts";

export const NODE_POLICY_PATH = join(
  REPO_ROOT,
  "deploy",
  "components",
  "node-confinement",
  "policy.yaml",
);

/** The shipped policy's matchCondition, replaced by the test's. */
const SHIPPED_AGENT =
  /request\.userInfo\.username in\s*\['system:serviceaccount:csi-node-provisioner:csi-node-provisioner'\]/;

/** On with the cluster option, else with CLUSTER_NODE_POLICY=1. */
export function nodePolicyEnabled(
  option: boolean | undefined,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): boolean {
  return option ?? env.CLUSTER_NODE_POLICY === "1";
}

/** The test's agents' prefix: startAgent names each `csi-provisioner-<node>` in `namespace`. */
export function agentUsernamePrefix(namespace: string): string {
  return `system:serviceaccount:${namespace}:csi-provisioner-`;
}

/**
 * The shipped policy, matching its own account (deploy/'s, which the tests
 * that apply deploy/ run as) and every ServiceAccount whose username starts
 * with `prefix`.
 */
export async function nodePolicyManifest(prefix: string): Promise<string> {
  const text = await Deno.readTextFile(NODE_POLICY_PATH);
  const shipped = text.match(SHIPPED_AGENT);
  if (shipped === null) {
    throw new Error(`${NODE_POLICY_PATH} no longer names ${SHIPPED_AGENT}`);
  }
  return text.replace(
    SHIPPED_AGENT,
    `(${shipped[0]} || request.userInfo.username.startsWith('${prefix}'))`,
  );
}

/**
 * A Pod of the ServiceAccount on the node (spec.nodeName set, no kubelet
 * runs it): what a token is bound to so that it carries the node's name.
 * `existing` names the agent's Pod (POD_NAME): a DaemonSet's Pod of the
 * same account is used, as the kubelet would; a Pod of another account (a
 * test's stand-in owner for upstream's owner levels) cannot hold the token.
 */
export async function tokenPod(
  admin: AdminClients,
  ref: IdentityRef,
  node: string,
  existing?: string,
): Promise<{ name: string; uid: string }> {
  if (existing !== undefined) {
    const pod = await admin.core.readNamespacedPod({ name: existing, namespace: ref.namespace })
      .catch(() => undefined);
    if (pod?.spec?.serviceAccountName === ref.serviceAccount && pod.spec.nodeName === node) {
      return { name: existing, uid: pod.metadata!.uid! };
    }
  }
  // One account may serve every node (deploy/'s): one Pod per node.
  const name = ref.serviceAccount.endsWith(`-${node}`)
    ? `${ref.serviceAccount}-token`
    : `${ref.serviceAccount}-${node}-token`;
  await ensureServiceAccount(admin, ref);
  await createPod(admin, ref, node, name);
  const pod = await admin.core.readNamespacedPod({ name, namespace: ref.namespace });
  if (pod.spec?.nodeName !== node) {
    throw new Error(`Pod ${ref.namespace}/${name} is on ${pod.spec?.nodeName}, not ${node}`);
  }
  return { name, uid: pod.metadata!.uid! };
}

async function createPod(admin: AdminClients, ref: IdentityRef, node: string, name: string) {
  await createIfMissing(() =>
    admin.core.createNamespacedPod({
      namespace: ref.namespace,
      body: {
        metadata: { name },
        spec: {
          nodeName: node,
          serviceAccountName: ref.serviceAccount,
          automountServiceAccountToken: false,
          containers: [{ name: "agent", image: "csi-node-provisioner:test" }],
        },
      },
    })
  );
}
