import { deepStrictEqual, match } from "node:assert/strict";
import { DEFAULT_AGENT_SELECTOR, parseExplainArgs } from "./explain.ts";

const program = { program: "p" };

Deno.test("explain takes -n, --namespace=, --kubeconfig and the claim in any order", () => {
  deepStrictEqual(parseExplainArgs(["-n", "apps", "data"], {}, program), {
    kind: "explain",
    request: {
      namespace: "apps",
      claim: "data",
      kubeconfig: "",
      master: "",
      agentSelector: DEFAULT_AGENT_SELECTOR,
    },
  });
  const parsed = parseExplainArgs(["data", "--namespace=x", "--kubeconfig", "/k"], {
    KUBECONFIG: "/env",
  }, program);
  deepStrictEqual(
    parsed.kind === "explain" && [parsed.request.namespace, parsed.request.kubeconfig],
    [
      "x",
      "/k",
    ],
  );
});

Deno.test("KUBECONFIG is used when --kubeconfig is not given, and the namespace defaults to default", () => {
  const parsed = parseExplainArgs(["data"], { KUBECONFIG: "/env" }, program);
  deepStrictEqual(
    parsed.kind === "explain" && [parsed.request.namespace, parsed.request.kubeconfig],
    [
      "default",
      "/env",
    ],
  );
});

Deno.test("bad arguments are one problem each", () => {
  deepStrictEqual(parseExplainArgs([], {}, program), {
    kind: "invalid",
    problem: "name the claim to explain",
  });
  deepStrictEqual(parseExplainArgs(["a", "b"], {}, program), {
    kind: "invalid",
    problem: "one claim only, not a b",
  });
  deepStrictEqual(parseExplainArgs(["-x", "a"], {}, program), {
    kind: "invalid",
    problem: "unknown flag -x",
  });
  deepStrictEqual(parseExplainArgs(["a", "-n"], {}, program), {
    kind: "invalid",
    problem: "flag -n needs a value",
  });
});

Deno.test("--help prints the subcommand's usage", () => {
  const parsed = parseExplainArgs(["data", "--help"], {}, program);
  match(
    parsed.kind === "help" ? parsed.text : "",
    /^Usage: p explain \[-n NAMESPACE\] \[flags\] CLAIM\n/,
  );
});
