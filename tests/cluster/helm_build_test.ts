import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { HELM_TOOLS_DIR, helmCachePath, helmLdflags, pinnedHelmVersions } from "./helm_build.ts";

Deno.test("helm's versions come from its own tools module", async () => {
  const goMod = await Deno.readTextFile(join(HELM_TOOLS_DIR, "go.mod"));
  const versions = pinnedHelmVersions(goMod);
  ok(/^v3\.\d+\.\d+$/.test(versions.helm), versions.helm);
  strictEqual(versions.kubeMajor, "1");
  ok(Number(versions.kubeMinor) >= 30, versions.kubeMinor);
  // Not the cluster's module: no replace lines pin helm's k8s.io modules.
  ok(!/^replace /m.test(goMod));
});

Deno.test("helmLdflags stamps the version and the default Kubernetes version like helm's Makefile", () => {
  const flags = helmLdflags({ helm: "v3.22.0", kubeMajor: "1", kubeMinor: "37" }).split(" -X ");
  ok(flags.includes("helm.sh/helm/v3/internal/version.version=v3.22.0"));
  ok(flags.includes("helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37"));
  ok(flags.includes("helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1"));
});

Deno.test("helm is cached by the hash of its go.sum", () => {
  deepStrictEqual(
    helmCachePath("abc", { XDG_CACHE_HOME: "/c" }),
    "/c/csi-node-provisioner/helm-abc/helm",
  );
});
