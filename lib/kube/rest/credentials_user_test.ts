import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { kubeconfig, withDir } from "../../../tests/fakes/kubeconfigs.ts";
import { loadUserCredentials } from "./credentials.ts";

Deno.test(
  "a user's credentials: the context of the second file, its namespace, --context and --master",
  withDir(async (dir) => {
    const [a, b] = [join(dir, "a"), join(dir, "b")];
    writeFileSync(a, kubeconfig("dev", { namespace: "shop" }));
    writeFileSync(b, kubeconfig("prod", { current: "prod", namespace: "billing" }));
    const env = { KUBECONFIG: `${a}:${b}` };
    const current = await loadUserCredentials({ kubeconfig: "", context: "", master: "", env });
    strictEqual(current.credentials.server.href, "https://prod:6443/");
    deepStrictEqual(await current.credentials.headers(), { authorization: "Bearer token-of-prod" });
    strictEqual(current.namespace, "billing");
    const dev = await loadUserCredentials({ kubeconfig: "", context: "dev", master: "", env });
    strictEqual(dev.credentials.server.href, "https://dev:6443/");
    strictEqual(dev.namespace, "shop");
    const master = await loadUserCredentials({
      kubeconfig: a,
      context: "dev",
      master: "https://elsewhere:443",
      env,
    });
    strictEqual(master.credentials.server.href, "https://elsewhere/");
    deepStrictEqual(await master.credentials.headers(), { authorization: "Bearer token-of-dev" });
  }),
);

Deno.test(
  "~/.kube/config is read when KUBECONFIG is unset; without any, in-cluster or a clear error",
  withDir(async (dir) => {
    const home = join(dir, "home");
    Deno.mkdirSync(join(home, ".kube"), { recursive: true });
    writeFileSync(join(home, ".kube", "config"), kubeconfig("laptop", { current: "laptop" }));
    const found = await loadUserCredentials({
      kubeconfig: "",
      context: "",
      master: "",
      env: { HOME: home },
    });
    strictEqual(found.credentials.server.href, "https://laptop:6443/");
    strictEqual(found.namespace, "");
    const empty = { HOME: join(dir, "nobody") };
    await rejects(loadUserCredentials({ kubeconfig: "", context: "", master: "", env: empty }), {
      message:
        "no Kubernetes configuration: set --kubeconfig (or KUBECONFIG) or --master, or run in a pod",
    });
    await rejects(
      loadUserCredentials({ kubeconfig: "", context: "x", master: "", env: empty }),
      {
        message: "no Kubernetes configuration for --context x: no kubeconfig found " +
          "(--kubeconfig, KUBECONFIG, ~/.kube/config)",
      },
    );
  }),
);

Deno.test(
  "an exec plugin's user of a merged context: its relative command runs, from its file's directory",
  withDir(async (dir) => {
    const credential = {
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: "from-the-plugin" },
    };
    Deno.mkdirSync(join(dir, "bin"));
    writeFileSync(
      join(dir, "bin", "login.sh"),
      `#!/bin/sh\nprintf '%s' '${JSON.stringify(credential)}'\n`,
      { mode: 0o700 },
    );
    const plugin = join(dir, "plugin");
    writeFileSync(
      plugin,
      JSON.stringify({
        contexts: [{ name: "sso", context: { cluster: "c", user: "sso", namespace: "team" } }],
        clusters: [{ name: "c", cluster: { server: "https://sso:6443" } }],
        users: [{
          name: "sso",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: "bin/login.sh",
              interactiveMode: "Never",
            },
          },
        }],
      }),
    );
    const first = join(dir, "first");
    writeFileSync(first, kubeconfig("dev", { current: "dev" }));
    const loaded = await loadUserCredentials({
      kubeconfig: "",
      context: "sso",
      master: "",
      env: { KUBECONFIG: `${first}:${plugin}` },
    });
    strictEqual(loaded.credentials.server.href, "https://sso:6443/");
    strictEqual(loaded.namespace, "team");
    deepStrictEqual(await loaded.credentials.headers(), {
      authorization: "Bearer from-the-plugin",
    });
  }),
);
