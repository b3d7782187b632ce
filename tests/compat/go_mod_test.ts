import assert from "node:assert/strict";
import { compatGoMod, KUBERNETES_RELEASES, stagingModules, stagingVersion } from "./go_mod.ts";

const KUBERNETES_GO_MOD = `module k8s.io/kubernetes

go 1.24.0

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
)
`;

Deno.test("the staging modules are those k8s.io/kubernetes replaces with its directories", () => {
  assert.deepEqual(stagingModules(KUBERNETES_GO_MOD), ["k8s.io/api", "k8s.io/client-go"]);
  assert.deepEqual(stagingModules("replace k8s.io/api => ./staging/src/k8s.io/api\n"), [
    "k8s.io/api",
  ]);
  assert.throws(() => stagingModules("module x\n"), /replaces no staging module/);
});

Deno.test("a release's staging modules are v0 of its minor and patch", () => {
  assert.equal(stagingVersion("v1.34.4"), "v0.34.4");
  assert.throws(() => stagingVersion("1.34"), /not a Kubernetes release: 1\.34/);
});

Deno.test("the compatibility module requires the release, replaces each staging module, builds the control plane", () => {
  const goMod = compatGoMod({
    minor: "1.34",
    kubernetes: "v1.34.4",
    kubernetesGoMod: KUBERNETES_GO_MOD,
  });
  assert.match(goMod, /^module csi-node-provisioner\/tests\/compat\/modules\/1\.34$/m);
  assert.match(goMod, /^go 1\.24\.0$/m);
  assert.match(goMod, /^require k8s\.io\/kubernetes v1\.34\.4$/m);
  assert.match(goMod, /^\tk8s\.io\/api => k8s\.io\/api v0\.34\.4$/m);
  assert.match(goMod, /^\tk8s\.io\/client-go => k8s\.io\/client-go v0\.34\.4$/m);
  const tools = goMod.match(/^tool \(\n([^)]*)\)/m)?.[1]?.trim().split(/\s+/);
  assert.deepEqual(tools, [
    "k8s.io/kubernetes/cmd/kube-apiserver",
    "k8s.io/kubernetes/cmd/kube-controller-manager",
    "k8s.io/kubernetes/cmd/kube-scheduler",
    "k8s.io/kubernetes/cmd/kubectl",
  ]);
  assert.doesNotMatch(goMod, /^\s*(go\.etcd\.io|github\.com\/kubernetes-csi)/m);
});

Deno.test("each checked-in module requires its release and replaces every staging module to its v0", async () => {
  for (const minor of ["1.34", "1.35", "1.37"]) {
    const release = KUBERNETES_RELEASES[minor] ?? "";
    const goMod = await Deno.readTextFile(new URL(`./modules/${minor}/go.mod`, import.meta.url));
    assert.match(
      goMod,
      new RegExp(`^\\tk8s\\.io/kubernetes ${release.replaceAll(".", "\\.")} `, "m"),
    );
    const replaces = [...goMod.matchAll(/^\t(\S+) => (\S+) (\S+)$/gm)];
    assert.ok(replaces.length > 20, `${minor}: ${replaces.length} replace lines`);
    for (const [, from, to, version] of replaces) {
      assert.equal(to, from);
      assert.equal(version, stagingVersion(release), `${minor}: ${from}`);
    }
  }
});
