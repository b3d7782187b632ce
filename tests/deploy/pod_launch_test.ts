import { deepStrictEqual, throws } from "node:assert/strict";
import { resolveEnv, withCsiAddress } from "./pod_launch.ts";

const POD = { nodeName: "node-a", namespace: "democratic-csi", podName: "ds-x1" };

Deno.test("resolveEnv: values and the pod's downward-API fields, as the kubelet sets them", () => {
  const env = [
    { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
    { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "PLAIN", value: "x" },
    { name: "EMPTY" },
  ];
  deepStrictEqual(resolveEnv(env, POD), {
    NODE_NAME: "node-a",
    NAMESPACE: "democratic-csi",
    POD_NAME: "ds-x1",
    PLAIN: "x",
    EMPTY: "",
  });
  deepStrictEqual(resolveEnv(undefined, POD), {});
});

Deno.test("resolveEnv: a source it cannot resolve names the variable", () => {
  throws(
    () => resolveEnv([{ name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }], POD),
    /env IP: only fieldRef/,
  );
  throws(
    () => resolveEnv([{ name: "PW", valueFrom: {} }], POD),
    /env PW/,
  );
});

Deno.test("withCsiAddress: replaces the one --csi-address value, nothing else", () => {
  deepStrictEqual(
    withCsiAddress(
      ["--v=5", "--csi-address=/csi-data/csi.sock", "--timeout=90s"],
      "/tmp/n/csi.sock",
    ),
    ["--v=5", "--csi-address=/tmp/n/csi.sock", "--timeout=90s"],
  );
  deepStrictEqual(withCsiAddress(["-csi-address=/a"], "/b"), ["-csi-address=/b"]);
  throws(() => withCsiAddress(["--v=5"], "/b"), /expected one --csi-address/);
  throws(() => withCsiAddress(["--csi-address=/a", "--csi-address=/c"], "/b"), /expected one/);
  throws(() => withCsiAddress(["--csi-address", "/a"], "/b"), /expected one/);
});
