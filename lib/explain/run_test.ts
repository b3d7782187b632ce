import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { KubeApiError } from "../kube/rest/types.ts";
import { credentialProblem, explainClaim, readProblem } from "./run.ts";
import type { ExplainReads } from "./ports.ts";

const SERVER = new URL("https://127.0.0.1:6443");

Deno.test("a parser's message, which may quote the kubeconfig, is never repeated", () => {
  const error = new Error("bad indentation at line 3:\n    token: s3cr3t-t0ken\n");
  error.name = "YAMLException";
  const text = credentialProblem(error, "/home/me/.kube/config");
  strictEqual(
    text,
    "cannot use the kubeconfig /home/me/.kube/config: it is not valid YAML or JSON",
  );
  const other = credentialProblem(new TypeError("Cannot read 's3cr3t'"), "/k");
  ok(!other.includes("s3cr3t"), other);
});

Deno.test("file errors and the loader's own messages name the path only", () => {
  const missing = Object.assign(new Error("ENOENT: no such file or directory, open '/k'"), {
    code: "ENOENT",
  });
  strictEqual(credentialProblem(missing, "/k"), "cannot use the kubeconfig /k: no such file");
  const own = new Error('kubeconfig /k: no current context "x"');
  strictEqual(credentialProblem(own, "/k"), 'kubeconfig /k: no current context "x"');
});

Deno.test("refused credentials and an unreachable server are one line each", () => {
  strictEqual(
    readProblem(new KubeApiError(401, "Unauthorized", "Unauthorized"), SERVER),
    "the API server at https://127.0.0.1:6443 refused the kubeconfig's credentials (401 Unauthorized)",
  );
  strictEqual(
    readProblem(new TypeError("Connection refused"), SERVER),
    "cannot reach the API server at https://127.0.0.1:6443: Connection refused",
  );
});

Deno.test("explainClaim turns a failed read into exit code 1 and one line on stderr", async () => {
  const failing = {
    claim: () => Promise.reject(new KubeApiError(401, "Unauthorized", "Unauthorized")),
  } as unknown as ExplainReads;
  const result = await explainClaim(failing, {
    namespace: "a",
    name: "b",
    agentSelector: "",
    server: SERVER,
    program: "p",
  });
  deepStrictEqual(result, {
    code: 1,
    stdout: "",
    stderr:
      "p explain: the API server at https://127.0.0.1:6443 refused the kubeconfig's credentials (401 Unauthorized)\n",
  });
});
