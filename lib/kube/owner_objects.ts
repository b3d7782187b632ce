/**
 * Reads of the objects that may own CSIStorageCapacity: any namespaced
 * object named by apiVersion and kind (the chain from the agent's Pod up to
 * its DaemonSet or Deployment), and this node's Node. Only identity and
 * owners are read.
 */
import { groupVersionPath } from "./discovery.ts";
import type { RawObject } from "./informer/informer.ts";
import { hasStatus, type KubeRest } from "./rest/client.ts";
import type { ObjectIdentity, ObjectRef, OwnerReference } from "../model/objects.ts";

interface ResourceList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

/**
 * The resource (plural) of a kind, by discovery, as controller-runtime's
 * REST mapper finds it for upstream's owner lookup: no guessed plurals.
 */
async function namespacedResource(
  rest: KubeRest,
  type: { apiVersion: string; kind: string },
  signal?: AbortSignal,
): Promise<string> {
  const list = await rest.request<ResourceList>({
    method: "GET",
    path: groupVersionPath(type.apiVersion),
    ...(signal === undefined ? {} : { signal }),
  });
  const found = (list.resources ?? []).find((resource) =>
    resource.kind === type.kind && resource.namespaced && !resource.name.includes("/")
  );
  if (found === undefined) {
    throw new Error(`no namespaced resource of kind ${type.kind} in ${type.apiVersion}`);
  }
  return found.name;
}

function identityOf(raw: RawObject): ObjectIdentity {
  const metadata = raw.metadata as RawObject["metadata"] & {
    uid?: string;
    ownerReferences?: OwnerReference[];
  };
  return { uid: metadata.uid ?? "", ownerReferences: metadata.ownerReferences ?? [] };
}

/** Reads a namespaced object's identity; throws (with the API's reason) when it cannot. */
export async function readObjectIdentity(
  rest: KubeRest,
  ref: ObjectRef,
  signal?: AbortSignal,
): Promise<ObjectIdentity> {
  const resource = await namespacedResource(rest, ref, signal);
  const raw = await rest.request<RawObject>({
    method: "GET",
    path: `${groupVersionPath(ref.apiVersion)}/namespaces/${ref.namespace}/${resource}/${ref.name}`,
    ...(signal === undefined ? {} : { signal }),
  });
  return identityOf(raw);
}

/** The Node's UID; undefined when the Node does not exist. */
export async function readNodeUid(
  rest: KubeRest,
  name: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    const raw = await rest.request<RawObject>({
      method: "GET",
      path: `/api/v1/nodes/${name}`,
      ...(signal === undefined ? {} : { signal }),
    });
    return identityOf(raw).uid;
  } catch (error) {
    if (hasStatus(error, 404)) return undefined;
    throw error;
  }
}
