import assert from "node:assert/strict";
import { capacityFor, nodeDriverPaths, startNodeDriver, testDriverArgs } from "./drivers.ts";
import { hostpathArgs } from "./hostpath.ts";
import { fakeNodeNames } from "./nodes.ts";
import { ProcessGroup } from "./process.ts";
import { driverIdentity, poolNames, storageClassesOf, storageClassName } from "./setup.ts";

Deno.test("the hostpath driver refuses the test driver's capability options, before spawning", async () => {
  const group = new ProcessGroup();
  await assert.rejects(
    () =>
      startNodeDriver({
        group,
        kind: "hostpath",
        node: "node-a",
        index: 0,
        paths: nodeDriverPaths("/tmp/never"),
        logFile: "/tmp/never.log",
        driver: { controllerCapabilities: ["CREATE_DELETE_VOLUME"] },
        hostpathBinary: "/nonexistent/hostpathplugin",
      }),
    /controllerCapabilities are not the hostpath driver's/,
  );
  assert.equal(group.processes.length, 0);
});

Deno.test("hostpath command line: upstream's args with the node's socket, id, pools and state dir", () => {
  const paths = nodeDriverPaths("/run/c/nodes/node-a", { recorded: true });
  assert.equal(paths.csiSocket, "/run/c/nodes/node-a/csi.sock");
  assert.equal(paths.driverSocket, "/run/c/nodes/node-a/driver.sock");
  assert.deepEqual(
    hostpathArgs({
      endpoint: `unix://${paths.driverSocket}`,
      node: "node-a",
      stateDir: paths.stateDir,
      capacity: { fast: "10Gi", slow: "1Gi" },
      extraArgs: ["--enable-attach"],
    }),
    [
      "--drivername=hostpath.csi.k8s.io",
      "--v=4",
      "--endpoint=unix:///run/c/nodes/node-a/driver.sock",
      "--nodeid=node-a",
      "--capacity=fast=10Gi",
      "--capacity=slow=1Gi",
      "--statedir=/run/c/nodes/node-a/state",
      "--enable-attach",
    ],
  );
  assert.equal(nodeDriverPaths("/x").driverSocket, "/x/csi.sock", "no proxy: the driver's socket");
});

Deno.test("test driver command line: node id, pools, sockets and state dir", () => {
  const paths = nodeDriverPaths("/run/c/nodes/node-a");
  const args = testDriverArgs("node-a", paths, {
    capacity: { fast: "10Gi", slow: "1Gi" },
    driver: {
      controllerCapabilities: ["CREATE_DELETE_VOLUME", "GET_CAPACITY"],
      volumeIds: "name",
      extraArgs: ["--x"],
    },
  });
  const joined = args.join(" ");
  assert.equal(args[0], "run");
  assert.match(joined, /--endpoint[ =]unix:\/\/\/run\/c\/nodes\/node-a\/csi\.sock/);
  assert.match(joined, /--node-id[ =]node-a/);
  assert.match(joined, /--capacity[ =]fast=10Gi --capacity[ =]slow=1Gi/);
  assert.match(joined, /--control-endpoint[ =]unix:\/\/\/run\/c\/nodes\/node-a\/control\.sock/);
  assert.match(joined, /--state-dir[ =]\/run\/c\/nodes\/node-a\/state/);
  assert.match(joined, /--controller-capabilities[ =]CREATE_DELETE_VOLUME,GET_CAPACITY/);
  assert.match(joined, /--volume-ids[ =]name/);
  assert.equal(args.at(-1), "--x");
});

Deno.test("per-node capacity and the storage classes it implies", () => {
  const options = {
    capacity: (node: string) => node === "node-a" ? { fast: "1Gi" } : { slow: "2Gi" },
  };
  assert.deepEqual(capacityFor(options, "node-a", 0), { fast: "1Gi" });
  assert.deepEqual(capacityFor({}, "node-a", 0), { fast: "10Gi" });
  assert.deepEqual(poolNames(options, ["node-a", "node-b"]), ["fast", "slow"]);
});

Deno.test("socket paths beyond the Linux limit are refused up front", () => {
  assert.throws(() => nodeDriverPaths("/" + "x".repeat(120)), /socket path too long/);
});

Deno.test("fake node names run node-a .. node-z, node-aa ..", () => {
  const names = fakeNodeNames(28);
  assert.deepEqual([names[0], names[25], names[26], names[27]], [
    "node-a",
    "node-z",
    "node-aa",
    "node-ab",
  ]);
});

Deno.test("democratic-csi: one class whatever the pools, its own name and topology key", () => {
  assert.equal(storageClassName("democratic", "fast"), "democratic-local");
  const classes = storageClassesOf("democratic", ["fast", "slow"]);
  assert.deepEqual(classes.map((c) => [c.metadata?.name, c.provisioner, c.volumeBindingMode]), [
    ["democratic-local", "org.democratic-csi.local-hostpath", "WaitForFirstConsumer"],
  ]);
  assert.deepEqual(driverIdentity("democratic"), {
    driverName: "org.democratic-csi.local-hostpath",
    topologyKey: "org.democratic-csi.topology/node",
  });
  assert.deepEqual(storageClassesOf("hostpath", ["fast"]).map((c) => c.metadata?.name), [
    "csi-hostpath-fast",
  ]);
});

Deno.test("democratic-csi refuses the test driver's options and --v, before spawning", async () => {
  const group = new ProcessGroup();
  await assert.rejects(
    () =>
      startNodeDriver({
        group,
        kind: "democratic",
        node: "node-a",
        index: 0,
        paths: nodeDriverPaths("/tmp/never"),
        logFile: "/tmp/never.log",
        driver: { volumeIds: "name", verbosity: 5 },
        democraticBin: "/nonexistent/democratic-csi",
      }),
    /driverOptions volumeIds, verbosity are not the democratic driver's/,
  );
  assert.equal(group.processes.length, 0);
});
