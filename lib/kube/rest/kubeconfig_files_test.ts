import { deepStrictEqual, rejects } from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readKubeconfigs, userKubeconfigSearch } from "./kubeconfig_files.ts";

function withDir(body: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "kubeconfigs-"));
    try {
      await body(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** A kubeconfig with one context, its cluster and a token user, all named by the context. */
function kubeconfig(
  name: string,
  options: { current?: string; namespace?: string; server?: string } = {},
): string {
  return JSON.stringify({
    ...(options.current === undefined ? {} : { "current-context": options.current }),
    contexts: [{
      name,
      context: {
        cluster: name,
        user: name,
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      },
    }],
    clusters: [{ name, cluster: { server: options.server ?? `https://${name}:6443` } }],
    users: [{ name, user: { token: `token-of-${name}` } }],
  });
}

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
