import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { agentPod } from "../../../tests/builders/explain.ts";
import { agentConfig, agentOnNode } from "./agents.ts";

Deno.test("a terminating pod is not ready, and a ready pod beside it is the one judged", () => {
  const old = { ...agentPod("node-a"), name: "a-old", deletionTimestamp: "2026-11-23T11:00:00Z" };
  strictEqual(
    agentOnNode([old], "node-a").text,
    "agent pod csi-node-provisioner/a-old is not ready (terminating)",
  );
  const fresh = { ...agentPod("node-a"), name: "a-new" };
  deepStrictEqual(
    [agentOnNode([old, fresh], "node-a").ready, agentOnNode([old, fresh], "node-a").pod?.name],
    [true, "a-new"],
  );
});

Deno.test("the agent's flags are parsed by its own parser; flags that do not parse give defaults", () => {
  const pod = agentPod("node-a", {
    args: ["--csi-address=/s", "--node-deployment", "--node-deployment-immediate-binding=false"],
  });
  const parsed = agentConfig(pod, "node-a");
  deepStrictEqual(
    [parsed.source, parsed.config.nodeDeploymentImmediateBinding, parsed.config.nodeName],
    ["pod", false, "node-a"],
  );
  const broken = agentConfig(agentPod("node-a", { args: ["--no-such-flag"] }), "node-a");
  deepStrictEqual([broken.source, broken.config.nodeDeploymentImmediateBinding], [
    "defaults",
    true,
  ]);
});

Deno.test("with no agent pod and no node, the defaults are replayed for any node", () => {
  const none = agentConfig(undefined, "");
  deepStrictEqual([none.source, none.config.nodeName, none.config.nodeDeployment], [
    "defaults",
    "",
    true,
  ]);
  const unscheduled = agentConfig({ ...agentPod("node-a"), nodeName: "" }, "");
  deepStrictEqual([unscheduled.source, unscheduled.config.nodeName], ["pod", ""]);
});
