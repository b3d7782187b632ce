import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { chooseContext, type Kubeconfig, mergeKubeconfigs } from "./kubeconfig.ts";

const FIRST: Kubeconfig = {
  "current-context": "dev",
  contexts: [
    { name: "dev", context: { cluster: "dev", user: "me", namespace: "shop" } },
    { name: "both", context: { cluster: "dev", user: "me" } },
  ],
  clusters: [{
    name: "dev",
    cluster: { server: "https://dev:6443", "certificate-authority": "ca.crt" },
  }],
  users: [{ name: "me", user: { tokenFile: "token", exec: { command: "bin/login" } } }],
};

const SECOND: Kubeconfig = {
  "current-context": "prod",
  contexts: [
    { name: "prod", context: { cluster: "prod", user: "admin", namespace: "billing" } },
    { name: "both", context: { cluster: "prod", user: "admin", namespace: "ignored" } },
  ],
  clusters: [
    { name: "prod", cluster: { server: "https://prod:6443" } },
    { name: "dev", cluster: { server: "https://shadowed:6443" } },
  ],
  users: [{
    name: "admin",
    user: { "client-certificate": "/etc/admin.crt", "client-key": "keys/admin.key" },
  }],
};

const MERGED = mergeKubeconfigs([
  { path: "/home/me/.kube/config", config: FIRST },
  { path: "/srv/prod/kubeconfig", config: SECOND },
]);

Deno.test("merged as kubectl merges KUBECONFIG: the first file to set a name wins", () => {
  deepStrictEqual(MERGED.contexts?.map((entry) => entry.name), ["dev", "both", "prod"]);
  deepStrictEqual(MERGED.clusters?.map((entry) => [entry.name, entry.cluster.server]), [
    ["dev", "https://dev:6443"],
    ["prod", "https://prod:6443"],
  ]);
  deepStrictEqual(MERGED.users?.map((entry) => entry.name), ["me", "admin"]);
  strictEqual(chooseContext(MERGED, { context: "both", source: "k" }).namespace, "");
});

Deno.test("current-context comes from the first file that sets one", () => {
  strictEqual(MERGED["current-context"], "dev");
  const unset = mergeKubeconfigs([
    { path: "/a", config: { ...FIRST, "current-context": "" } },
    { path: "/b", config: SECOND },
  ]);
  strictEqual(unset["current-context"], "prod");
});

Deno.test("paths in each file are relative to that file, bare commands stay for PATH", () => {
  strictEqual(
    chooseContext(MERGED, { context: "", source: "k" }).cluster["certificate-authority"],
    "/home/me/.kube/ca.crt",
  );
  deepStrictEqual(chooseContext(MERGED, { context: "", source: "k" }).user, {
    tokenFile: "/home/me/.kube/token",
    exec: { command: "/home/me/.kube/bin/login" },
  });
  const admin = chooseContext(MERGED, { context: "prod", source: "k" }).user;
  strictEqual(admin["client-certificate"], "/etc/admin.crt");
  strictEqual(admin["client-key"], "/srv/prod/keys/admin.key");
  const bare = mergeKubeconfigs([{
    path: "/a/config",
    config: { users: [{ name: "u", user: { exec: { command: "gke-gcloud-auth-plugin" } } }] },
  }]);
  deepStrictEqual(bare.users?.[0]?.user.exec, { command: "gke-gcloud-auth-plugin" });
});

Deno.test("--context picks a context of any file, with its cluster, user and namespace", () => {
  const prod = chooseContext(MERGED, { context: "prod", source: "k" });
  strictEqual(prod.name, "prod");
  strictEqual(prod.cluster.server, "https://prod:6443");
  strictEqual(prod.namespace, "billing");
  const current = chooseContext(MERGED, { context: "", source: "k" });
  strictEqual(current.name, "dev");
  strictEqual(current.namespace, "shop");
});

Deno.test("a context, current-context or cluster that is not there is named", () => {
  throws(() => chooseContext(MERGED, { context: "staging", source: "/a:/b" }), {
    message: 'kubeconfig /a:/b: no context "staging"',
  });
  throws(() => chooseContext({ contexts: [] }, { context: "", source: "/a" }), {
    message: "kubeconfig /a: sets no current-context",
  });
  throws(() => chooseContext({ "current-context": "x" }, { context: "", source: "/a" }), {
    message: 'kubeconfig /a: no current context "x"',
  });
  const orphan: Kubeconfig = { contexts: [{ name: "o", context: { cluster: "gone", user: "u" } }] };
  throws(() => chooseContext(orphan, { context: "o", source: "/a" }), {
    message: 'kubeconfig /a: no cluster "gone"',
  });
});
