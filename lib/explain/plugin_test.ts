import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { isKubectlPlugin, pluginExplainArgs } from "./plugin.ts";

Deno.test("the plugin's file name, also as the release names it, makes the binary the plugin", () => {
  strictEqual(isKubectlPlugin("kubectl-csi_node_provisioner"), true);
  strictEqual(isKubectlPlugin("kubectl-csi_node_provisioner-darwin-arm64"), true);
  strictEqual(isKubectlPlugin("csi-node-provisioner"), false);
  strictEqual(isKubectlPlugin("kubectl-csi-node-provisioner"), false);
  strictEqual(isKubectlPlugin("bun"), false);
});

Deno.test("`kubectl csi-node-provisioner explain ARGS` and `... ARGS` are the same explain", () => {
  deepStrictEqual(pluginExplainArgs(["explain", "-n", "shop", "data"]), ["-n", "shop", "data"]);
  deepStrictEqual(pluginExplainArgs(["-n", "shop", "data"]), ["-n", "shop", "data"]);
  deepStrictEqual(pluginExplainArgs(["shop/explain"]), ["shop/explain"]);
});
