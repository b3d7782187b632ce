import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { Discovery, DISCOVERY_REUSE_MS } from "./discovery.ts";
import { KubeApiError } from "./rest/types.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";

const storageV1 = {
  resources: [{ name: "csistoragecapacities" }, { name: "volumeattributesclasses" }],
};

Deno.test("two checks of one group version at start-up send one discovery request", async () => {
  const rest = recordingRest([storageV1]);
  const discovery = new Discovery(rest, { now: () => 0 });
  strictEqual(await discovery.serves("storage.k8s.io/v1", "csistoragecapacities"), true);
  strictEqual(await discovery.serves("storage.k8s.io/v1", "volumeattributesclasses"), true);
  strictEqual(await discovery.serves("storage.k8s.io/v1", "csinodes"), false);
  deepStrictEqual(rest.requests, [{ method: "GET", path: "/apis/storage.k8s.io/v1" }]);
});

Deno.test("askers at the same moment share one request; the core group is /api/v1", async () => {
  const rest = recordingRest([{ resources: [{ name: "persistentvolumes" }] }]);
  const discovery = new Discovery(rest, { now: () => 0 });
  const answers = await Promise.all([
    discovery.serves("v1", "persistentvolumes"),
    discovery.serves("v1", "pods"),
  ]);
  deepStrictEqual(answers, [true, false]);
  deepStrictEqual(rest.requests.map((request) => request.path), ["/api/v1"]);
});

Deno.test("an answer is asked again once the reuse window has passed (a CRD installed later)", async () => {
  const rest = recordingRest([
    new KubeApiError(404, "NotFound", "the server could not find the requested resource"),
    { resources: [{ name: "volumesnapshots" }] },
  ]);
  let now = 0;
  const discovery = new Discovery(rest, { now: () => now });
  strictEqual(await discovery.serves("snapshot.storage.k8s.io/v1", "volumesnapshots"), false);
  now = DISCOVERY_REUSE_MS - 1;
  strictEqual(await discovery.serves("snapshot.storage.k8s.io/v1", "volumesnapshots"), false);
  strictEqual(rest.requests.length, 1);
  now = DISCOVERY_REUSE_MS;
  strictEqual(await discovery.serves("snapshot.storage.k8s.io/v1", "volumesnapshots"), true);
  strictEqual(rest.requests.length, 2);
});

Deno.test("a failed discovery is thrown and not kept: the next check asks again", async () => {
  const rest = recordingRest([new KubeApiError(503, "ServiceUnavailable", "etcd down"), storageV1]);
  const discovery = new Discovery(rest, { now: () => 0 });
  await rejects(discovery.serves("storage.k8s.io/v1", "csistoragecapacities"), /etcd down/);
  strictEqual(await discovery.serves("storage.k8s.io/v1", "csistoragecapacities"), true);
  strictEqual(rest.requests.length, 2);
});
