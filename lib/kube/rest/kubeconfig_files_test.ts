import { deepStrictEqual, rejects } from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { kubeconfig, withDir } from "../../../tests/fakes/kubeconfigs.ts";
import { readKubeconfigs, userKubeconfigSearch } from "./kubeconfig_files.ts";

Deno.test("kubectl's search: --kubeconfig, else KUBECONFIG's list, else ~/.kube/config", () => {
  deepStrictEqual(userKubeconfigSearch("/x", { KUBECONFIG: "/a:/b", HOME: "/h" }), {
    paths: ["/x"],
    needed: "every",
  });
  deepStrictEqual(userKubeconfigSearch("", { KUBECONFIG: "/a::/b:/a", HOME: "/h" }), {
    paths: ["/a", "/b"],
    needed: "one",
  });
  deepStrictEqual(userKubeconfigSearch("", { KUBECONFIG: "", HOME: "/h" }), {
    paths: ["/h/.kube/config"],
    needed: "none",
  });
  deepStrictEqual(userKubeconfigSearch("", {}), { paths: [], needed: "none" });
});

Deno.test(
  "files of KUBECONFIG that do not exist are skipped, but not all of them, nor --kubeconfig",
  withDir(async (dir) => {
    const [a, b, gone] = [join(dir, "a"), join(dir, "b"), join(dir, "gone")];
    writeFileSync(b, kubeconfig("b"));
    const read = await readKubeconfigs({ paths: [gone, b], needed: "one" });
    deepStrictEqual(read.map((file) => file.path), [b]);
    await rejects(readKubeconfigs({ paths: [gone, a], needed: "one" }), {
      message: `kubeconfig ${gone}:${a}: cannot be read (ENOENT)`,
    });
    await rejects(readKubeconfigs({ paths: [gone], needed: "every" }), {
      message: `kubeconfig ${gone}: cannot be read (ENOENT)`,
    });
    deepStrictEqual(await readKubeconfigs({ paths: [gone], needed: "none" }), []);
  }),
);
