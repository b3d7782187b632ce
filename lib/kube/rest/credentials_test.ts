import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCredentials } from "./credentials.ts";

function withDir(body: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "creds-"));
    try {
      await body(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return JSON.stringify({
    "current-context": "ctx",
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443", ...cluster } }],
    users: [{ name: "u", user }],
  });
}

Deno.test(
  "loadCredentials() reads a token kubeconfig with inline CA data",
  withDir(async (dir) => {
    const path = join(dir, "kubeconfig");
    writeFileSync(
      path,
      kubeconfig({ token: "t0k" }, { "certificate-authority-data": btoa("PEM") }),
    );
    const credentials = await loadCredentials({ kubeconfig: path, master: "", env: {} });
    strictEqual(credentials.server.href, "https://127.0.0.1:6443/");
    deepStrictEqual(await credentials.headers(), { authorization: "Bearer t0k" });
    strictEqual(String(credentials.tls.ca), "PEM");
    strictEqual(credentials.tls.rejectUnauthorized, true);
    strictEqual(credentials.caFile, undefined);
  }),
);

Deno.test(
  "loadCredentials() names a kubeconfig's CA file, relative to the kubeconfig, to be followed",
  withDir(async (dir) => {
    const path = join(dir, "kubeconfig");
    writeFileSync(join(dir, "ca.crt"), "PEM");
    writeFileSync(path, kubeconfig({ token: "t0k" }, { "certificate-authority": "ca.crt" }));
    const credentials = await loadCredentials({ kubeconfig: path, master: "", env: {} });
    strictEqual(String(credentials.tls.ca), "PEM");
    strictEqual(credentials.caFile, join(dir, "ca.crt"));
  }),
);

Deno.test(
  "loadCredentials() reads YAML, relative certificate files and --master",
  withDir(async (dir) => {
    writeFileSync(join(dir, "client.crt"), "CERT");
    writeFileSync(join(dir, "client.key"), "KEY");
    const path = join(dir, "config.yaml");
    writeFileSync(
      path,
      [
        "current-context: ctx",
        "contexts: [{name: ctx, context: {cluster: c, user: u}}]",
        "clusters: [{name: c, cluster: {server: 'https://10.0.0.1', insecure-skip-tls-verify: true}}]",
        "users: [{name: u, user: {client-certificate: client.crt, client-key: client.key}}]",
      ].join("\n"),
    );
    const credentials = await loadCredentials({
      kubeconfig: path,
      master: "https://10.0.0.2:8443",
      env: {},
    });
    strictEqual(credentials.server.host, "10.0.0.2:8443");
    strictEqual(String(credentials.tls.cert), "CERT");
    strictEqual(String(credentials.tls.key), "KEY");
    strictEqual(credentials.tls.rejectUnauthorized, false);
    deepStrictEqual(await credentials.headers(), {});
  }),
);

Deno.test(
  "loadCredentials() reads a token file, so a rotated ServiceAccount token is picked up",
  withDir(async (dir) => {
    writeFileSync(join(dir, "token"), "first\n");
    const path = join(dir, "kubeconfig");
    writeFileSync(path, kubeconfig({ tokenFile: "token" }));
    const credentials = await loadCredentials({ kubeconfig: path, master: "", env: {} });
    deepStrictEqual(await credentials.headers(), { authorization: "Bearer first" });
  }),
);

Deno.test(
  "loadCredentials() names what is missing",
  withDir(async (dir) => {
    const path = join(dir, "kubeconfig");
    writeFileSync(path, JSON.stringify({ "current-context": "nope", contexts: [] }));
    await rejects(loadCredentials({ kubeconfig: path, master: "", env: {} }), {
      message: `kubeconfig ${path}: no current context "nope"`,
    });
    await rejects(loadCredentials({ kubeconfig: "", master: "", env: {} }), {
      message:
        "no Kubernetes configuration: set --kubeconfig (or KUBECONFIG) or --master, or run in a pod",
    });
  }),
);

Deno.test(
  "a kubeconfig that cannot be parsed is named with its problem, and none of its contents",
  withDir(async (dir) => {
    const token = "sEcReT-t0ken-4f1e2d";
    const broken = {
      "broken.yaml": `users:\n- name: u\n  user:\n    token: ${token}\n   bad: indentation\n`,
      "broken.json": `{"users": [{"name": "u", "user": {"token": "${token}"}}`,
      "list.yaml": `- token: ${token}\n`,
      "wrong.yaml": `contexts: "${token}"\n`,
    };
    const problems: string[] = [];
    for (const [name, text] of Object.entries(broken)) {
      const path = join(dir, name);
      writeFileSync(path, text);
      await rejects(
        loadCredentials({ kubeconfig: path, master: "", env: {} }),
        (error: unknown) => {
          const message = (error as Error).message;
          strictEqual(message.includes(token), false, message);
          strictEqual(message.startsWith(`kubeconfig ${path}: `), true, message);
          strictEqual((error as { exitCode?: number }).exitCode, 2, "bad configuration");
          problems.push(message.slice(`kubeconfig ${path}: `.length));
          return true;
        },
      );
    }
    deepStrictEqual(problems, [
      "is not valid YAML or JSON (bad indentation of a mapping entry at line 5, column 4)",
      "is not valid YAML or JSON (unexpected end of the stream within a flow collection at line 1, column 67)",
      "is not a kubeconfig (a YAML mapping with clusters, users and contexts)",
      "is not a kubeconfig: contexts is not a list",
    ]);
    await rejects(
      loadCredentials({ kubeconfig: join(dir, "missing"), master: "", env: {} }),
      { message: `kubeconfig ${join(dir, "missing")}: cannot be read (ENOENT)` },
    );
  }),
);
