import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { agentContainer, renderKustomize, theObject } from "../deploy/render.ts";
import {
  containerEnv,
  containerScript,
  securitySettings,
  shellQuote,
  tmpfsSize,
  volumeMounts,
} from "./pod_container.ts";

Deno.test("containerScript() mounts into the root before making it read-only, then execs the entrypoint", () => {
  const script = containerScript({
    rootfs: "/r",
    mounts: [{ target: "/csi", kind: "bind", source: "/node dir" }],
    readOnlyRoot: true,
    uid: 0,
    gid: 0,
    dropAllCapabilities: true,
    noNewPrivs: true,
    command: ["/usr/local/bin/agent", "--v=2"],
    env: { NODE_NAME: "node-a" },
  }).split("\n");
  const at = (prefix: string) => script.findIndex((line) => line.startsWith(prefix));
  ok(at("mount --bind '/r' '/r'") < at("mount -t proc proc '/r/proc'"));
  ok(at("mount --bind '/node dir' '/r/csi'") < at("mount -o remount,bind,ro '/r'"));
  ok(script.includes("mkdir -p '/r/csi'"));
  ok(script.includes("touch '/r/dev/null'"));
  const last = script.at(-1)!;
  ok(last.startsWith(`exec env -i 'NODE_NAME=node-a' "$capsh" '--chroot=/r' '--drop=all'`), last);
  ok(last.endsWith(`'--no-new-privs' '--shell=/usr/local/bin/agent' '--' '--v=2'`), last);
});

Deno.test("shellQuote() survives single quotes", () => {
  strictEqual(shellQuote("it's"), `'it'"'"'s'`);
});

Deno.test("deploy/'s agent container as a runtime sees it: env, volumes, user and privileges", async () => {
  const { objects } = await renderKustomize((await ensureClusterBinaries()).kubectl);
  const daemonSet = theObject(objects, "DaemonSet");
  const container = agentContainer(daemonSet);
  deepStrictEqual(
    containerEnv(container, { nodeName: "n", namespace: "ns", podName: "p" }),
    { NODE_NAME: "n", NAMESPACE: "ns", POD_NAME: "p" },
  );
  deepStrictEqual(volumeMounts(daemonSet, container, { "socket-dir": "/host/csi" }), [
    { target: "/csi", kind: "bind", source: "/host/csi", readOnly: false },
    { target: "/tmp", kind: "tmpfs", options: "mode=1777,size=16m" },
  ]);
  throws(
    () => volumeMounts(daemonSet, container, {}),
    /no host directory given for volume socket-dir/,
  );
  deepStrictEqual(securitySettings(container, { uid: 65532, gid: 65532 }), {
    uid: 0,
    gid: 0,
    readOnlyRoot: true,
    dropAllCapabilities: true,
    noNewPrivs: true,
  });
});

Deno.test("tmpfsSize() takes binary quantities only", () => {
  strictEqual(tmpfsSize("16Mi"), "16m");
  strictEqual(tmpfsSize("512Ki"), "512k");
  throws(() => tmpfsSize("16M"), /not a binary quantity/);
});
