/**
 * Agent identities: real ServiceAccounts whose tokens come from the
 * TokenRequest API, so an agent has exactly the permissions a test grants it
 * through RBAC, and nothing more.
 */

import type { RbacV1Subject } from "@kubernetes/client-node";
import { join } from "node:path";
import type { AdminClients } from "./kubeconfig.ts";
import { writeKubeconfig } from "./kubeconfig.ts";

export interface IdentityRef {
  namespace: string;
  serviceAccount: string;
}

export interface IdentityContext {
  admin: AdminClients;
  server: string;
  caPem: string;
  /** Where the kubeconfig files go. */
  dir: string;
}

/** Long enough for any test or demo; the API server caps nothing by default. */
const TOKEN_SECONDS = 7 * 24 * 3600;

function isStatus(error: unknown, code: number): boolean {
  return (error as { code?: number } | null)?.code === code;
}

/** Creates the object unless it exists (409). */
export async function createIfMissing(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!isStatus(error, 409)) throw error;
  }
}

/**
 * Ensures the namespace and ServiceAccount exist, requests a token for it and
 * writes a kubeconfig using it. Returns the kubeconfig's path. `boundPod`
 * binds the token to that Pod (it then carries the Pod's node). `server` puts
 * another URL in it (a StallingProxy's), verified with the same CA bundle;
 * `fileSuffix` keeps such a kubeconfig apart from the direct one.
 */
export async function identityKubeconfig(
  context: IdentityContext,
  ref: IdentityRef,
  options: { server?: string; fileSuffix?: string; boundPod?: { name: string; uid: string } } = {},
): Promise<string> {
  const { core } = context.admin;
  await ensureServiceAccount(context.admin, ref);
  const request = await core.createNamespacedServiceAccountToken({
    name: ref.serviceAccount,
    namespace: ref.namespace,
    body: {
      spec: {
        audiences: [],
        expirationSeconds: TOKEN_SECONDS,
        ...(options.boundPod
          ? { boundObjectRef: { apiVersion: "v1", kind: "Pod", ...options.boundPod } }
          : {}),
      },
    },
  });
  const token = request.status?.token;
  if (!token) {
    throw new Error(`TokenRequest for ${ref.namespace}/${ref.serviceAccount} gave no token`);
  }
  await Deno.mkdir(context.dir, { recursive: true });
  const suffix = options.fileSuffix ? `.${options.fileSuffix}` : "";
  return await writeKubeconfig(
    join(context.dir, `${ref.namespace}.${ref.serviceAccount}${suffix}.kubeconfig`),
    {
      server: options.server ?? context.server,
      caPem: context.caPem,
      token,
      userName: `system:serviceaccount:${ref.namespace}:${ref.serviceAccount}`,
    },
  );
}

/** Creates the namespace and the ServiceAccount unless they exist. */
export async function ensureServiceAccount(admin: AdminClients, ref: IdentityRef): Promise<void> {
  await createIfMissing(() =>
    admin.core.createNamespace({ body: { metadata: { name: ref.namespace } } })
  );
  await createIfMissing(() =>
    admin.core.createNamespacedServiceAccount({
      namespace: ref.namespace,
      body: { metadata: { name: ref.serviceAccount } },
    })
  );
}

/** The RBAC subject of a ServiceAccount. */
export function serviceAccountSubject(ref: IdentityRef): RbacV1Subject {
  return { kind: "ServiceAccount", name: ref.serviceAccount, namespace: ref.namespace };
}

/**
 * Binds the ServiceAccount to cluster-admin, for tests that do not test RBAC.
 * Tests that do, create their own (Cluster)Roles and bindings instead.
 */
export async function grantClusterAdmin(admin: AdminClients, ref: IdentityRef): Promise<void> {
  const name = `test-cluster-admin:${ref.namespace}:${ref.serviceAccount}`;
  await createIfMissing(() =>
    admin.rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "cluster-admin",
        },
        subjects: [serviceAccountSubject(ref)],
      },
    })
  );
}
