import { deepStrictEqual, match } from "node:assert/strict";
import { chooseNamespace, DEFAULT_AGENT_SELECTOR, parseExplainArgs } from "./explain.ts";

const program = { program: "p" };

Deno.test("explain takes -n, --namespace=, --kubeconfig, --context and the claim in any order", () => {
  deepStrictEqual(parseExplainArgs(["-n", "apps", "data"], program), {
    kind: "explain",
    request: {
      namespace: "apps",
      claim: "data",
      kubeconfig: "",
      context: "",
      master: "",
      agentSelector: DEFAULT_AGENT_SELECTOR,
    },
  });
  const parsed = parseExplainArgs(
    ["data", "--namespace=x", "--kubeconfig", "/k", "--context=prod"],
    program,
  );
  deepStrictEqual(
    parsed.kind === "explain" &&
      [parsed.request.namespace, parsed.request.kubeconfig, parsed.request.context],
    ["x", "/k", "prod"],
  );
});

Deno.test("without -n the namespace is left to the context, then default", () => {
  const parsed = parseExplainArgs(["data"], program);
  deepStrictEqual(parsed.kind === "explain" && parsed.request.namespace, "");
  deepStrictEqual(chooseNamespace("", ""), "default");
  deepStrictEqual(chooseNamespace("", "shop"), "shop");
  deepStrictEqual(chooseNamespace("apps", "shop"), "apps");
});

Deno.test("NAMESPACE/CLAIM names the namespace, and may repeat -n but not contradict it", () => {
  const parsed = parseExplainArgs(["shop/data"], program);
  deepStrictEqual(
    parsed.kind === "explain" && [parsed.request.namespace, parsed.request.claim],
    ["shop", "data"],
  );
  deepStrictEqual(parseExplainArgs(["-n", "shop", "shop/data"], program).kind, "explain");
  deepStrictEqual(parseExplainArgs(["-n", "apps", "shop/data"], program), {
    kind: "invalid",
    problem: "two namespaces: --namespace apps and shop/data",
  });
  for (const arg of ["/data", "shop/", "a/b/c"]) {
    deepStrictEqual(parseExplainArgs([arg], program), {
      kind: "invalid",
      problem: `${arg} is not CLAIM or NAMESPACE/CLAIM`,
    });
  }
});

Deno.test("bad arguments are one problem each", () => {
  deepStrictEqual(parseExplainArgs([], program), {
    kind: "invalid",
    problem: "name the claim to explain",
  });
  deepStrictEqual(parseExplainArgs(["a", "b"], program), {
    kind: "invalid",
    problem: "one claim only, not a b",
  });
  deepStrictEqual(parseExplainArgs(["-x", "a"], program), {
    kind: "invalid",
    problem: "unknown flag -x",
  });
  deepStrictEqual(parseExplainArgs(["a", "-n"], program), {
    kind: "invalid",
    problem: "flag -n needs a value",
  });
});

Deno.test("--help prints the subcommand's usage, and the kubectl plugin's second form", () => {
  const parsed = parseExplainArgs(["data", "--help"], program);
  match(
    parsed.kind === "help" ? parsed.text : "",
    /^Usage: p explain \[-n NAMESPACE\] \[flags\] \[NAMESPACE\/\]CLAIM\n\n/,
  );
  const plugin = parseExplainArgs(["-h"], { program: "kubectl p", plugin: true });
  match(
    plugin.kind === "help" ? plugin.text : "",
    /^Usage: kubectl p explain .*\n {7}kubectl p \[-n NAMESPACE\] \[flags\] \[NAMESPACE\/\]CLAIM\n\n/,
  );
});
