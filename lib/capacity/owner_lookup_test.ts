import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { ObjectIdentity, ObjectRef, OwnerReference } from "../model/objects.ts";
import { lookupPodOwner, resolveOwner } from "./owner_lookup.ts";
import { type OwnerReads } from "./ports.ts";
import { quiet } from "../../tests/fakes/logger.ts";

const NS = "csi";

const controller = (apiVersion: string, kind: string, name: string): OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid: `uid-${name}`,
  controller: true,
});

/** Pod ← ReplicaSet ← Deployment, plus a lone pod; records every read. */
function cluster(nodes: Record<string, string> = { "node-a": "node-uid" }) {
  const objects = new Map<string, ObjectIdentity>([
    ["v1/Pod/agent", {
      uid: "uid-agent",
      ownerReferences: [
        { ...controller("v1", "ConfigMap", "not-controller"), controller: false },
        controller("apps/v1", "ReplicaSet", "agent-rs"),
      ],
    }],
    ["apps/v1/ReplicaSet/agent-rs", {
      uid: "uid-agent-rs",
      ownerReferences: [controller("apps/v1", "Deployment", "agent-deploy")],
    }],
    ["apps/v1/Deployment/agent-deploy", { uid: "uid-agent-deploy", ownerReferences: [] }],
    ["v1/Pod/lonely", { uid: "uid-lonely", ownerReferences: [] }],
  ]);
  const reads: string[] = [];
  const api: OwnerReads = {
    readObject: (ref: ObjectRef) => {
      const key = `${ref.apiVersion}/${ref.kind}/${ref.name}`;
      reads.push(`${key} in ${ref.namespace}`);
      const found = objects.get(key);
      return found ? Promise.resolve(found) : Promise.reject(new Error(`${key} not found`));
    },
    readNodeUid: (name) => {
      reads.push(`Node ${name}`);
      return Promise.resolve(nodes[name]);
    },
  };
  return { api, reads, nodes };
}

Deno.test("level 0 is the Pod itself", async () => {
  const { api, reads } = cluster();
  deepStrictEqual(
    await lookupPodOwner(api, { namespace: NS, podName: "agent", level: 0 }),
    { apiVersion: "v1", kind: "Pod", name: "agent", uid: "uid-agent", controller: true },
  );
  deepStrictEqual(reads, ["v1/Pod/agent in csi"]);
});

Deno.test("level 1 is the Pod's controller, taken from its reference without reading it", async () => {
  const { api, reads } = cluster();
  deepStrictEqual(
    await lookupPodOwner(api, { namespace: NS, podName: "agent", level: 1 }),
    controller("apps/v1", "ReplicaSet", "agent-rs"),
  );
  deepStrictEqual(reads, ["v1/Pod/agent in csi"]);
});

Deno.test("level 2 reads the parent and takes its controller", async () => {
  const { api, reads } = cluster();
  deepStrictEqual(
    await lookupPodOwner(api, { namespace: NS, podName: "agent", level: 2 }),
    controller("apps/v1", "Deployment", "agent-deploy"),
  );
  deepStrictEqual(reads, ["v1/Pod/agent in csi", "apps/v1/ReplicaSet/agent-rs in csi"]);
});

Deno.test("no controlling owner: upstream's message", async () => {
  const { api } = cluster();
  await rejects(
    lookupPodOwner(api, { namespace: NS, podName: "agent", level: 3 }),
    new Error(
      'apps/v1/Deployment "agent-deploy" in namespace "csi" has no controlling owner, cannot unwind the ownership further',
    ),
  );
  await rejects(
    resolveOwner(api, { kind: "pod", namespace: NS, podName: "lonely", level: 1 }, {
      logger: quiet,
    }),
    new Error(
      'look up owner(s) of pod: v1/Pod "lonely" in namespace "csi" has no controlling owner, cannot unwind the ownership further',
    ),
  );
  await rejects(
    resolveOwner(api, { kind: "pod", namespace: NS, podName: "missing", level: 0 }, {
      logger: quiet,
    }),
    new Error("look up owner(s) of pod: get object: v1/Pod/missing not found"),
  );
});

Deno.test("no owner: nothing is read and owners are left alone", async () => {
  const { api, reads } = cluster();
  const owner = await resolveOwner(api, { kind: "none" }, { logger: quiet });
  strictEqual(owner.current(), undefined);
  strictEqual(await owner.confirm(new AbortController().signal), "ok");
  deepStrictEqual(reads, []);
});

Deno.test("the Node owner: read at start, and again before each create", async () => {
  const { api, reads, nodes } = cluster();
  const owner = await resolveOwner(api, { kind: "node", nodeName: "node-a" }, { logger: quiet });
  deepStrictEqual(owner.current(), {
    apiVersion: "v1",
    kind: "Node",
    name: "node-a",
    uid: "node-uid",
    controller: true,
  });
  const signal = new AbortController().signal;
  strictEqual(await owner.confirm(signal), "ok");
  nodes["node-a"] = "new-uid"; // deleted and registered again
  strictEqual(await owner.confirm(signal), "ok");
  strictEqual(owner.current()?.uid, "new-uid");
  delete nodes["node-a"];
  strictEqual(await owner.confirm(signal), "gone");
  deepStrictEqual(reads, ["Node node-a", "Node node-a", "Node node-a", "Node node-a"]);
  await rejects(
    resolveOwner(api, { kind: "node", nodeName: "node-x" }, { logger: quiet }),
    new Error('--capacity-owner-node: Node "node-x" (NODE_NAME) not found'),
  );
});
