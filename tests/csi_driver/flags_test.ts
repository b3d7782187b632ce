import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseDriverFlags } from "./flags.ts";
import { GiB, MiB } from "./quantity.ts";

function problemsOf(argv: string[]): string[] {
  const outcome = parseDriverFlags(argv);
  return outcome.kind === "invalid" ? outcome.problems : [];
}

Deno.test("the documented command line yields pools in flag order and the defaults", () => {
  const outcome = parseDriverFlags([
    "--",
    "--endpoint",
    "unix:///tmp/x/csi.sock",
    "--node-id=node-a",
    "--capacity",
    "fast=10Gi",
    "--capacity",
    "slow=1Gi",
  ]);
  if (outcome.kind !== "run") throw new Error(JSON.stringify(outcome));
  deepStrictEqual(outcome.config, {
    socketPath: "/tmp/x/csi.sock",
    controlSocketPath: null,
    nodeId: "node-a",
    driverName: "test.csi.k8s.io",
    vendorVersion: "0.0.0-test",
    topologyKey: "topology.test.csi.k8s.io/node",
    pools: [
      { kind: "fast", sizeBytes: 10 * GiB, maxVolumeSizeBytes: null },
      { kind: "slow", sizeBytes: GiB, maxVolumeSizeBytes: null },
    ],
    stateDir: null,
    controllerCapabilities: ["CREATE_DELETE_VOLUME", "GET_CAPACITY"],
    pluginCapabilities: ["CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS"],
    callLogLimit: 10000,
    volumeIds: "random",
  });
  strictEqual(outcome.logLevel, "info");
});

Deno.test("every optional flag lands in the configuration, bare paths included", () => {
  const outcome = parseDriverFlags([
    "-endpoint=/tmp/x/csi.sock",
    "--node-id=n",
    "--capacity=a=1Gi",
    "--capacity=b=2Gi",
    "--max-volume-size=100Mi",
    "--max-volume-size=b=500Mi",
    "--driver-name=d.example.com",
    "--vendor-version=9.9",
    "--topology-key=k",
    "--state-dir=/tmp/x/state",
    "--control-endpoint=unix:///tmp/x/control.sock",
    "--controller-capabilities=CREATE_DELETE_VOLUME, MODIFY_VOLUME",
    "--plugin-capabilities=CONTROLLER_SERVICE",
    "--call-log-limit=5",
    "--log-level=silent",
    "--volume-ids=name",
  ]);
  if (outcome.kind !== "run") throw new Error(JSON.stringify(outcome));
  const { config } = outcome;
  deepStrictEqual(config.pools.map((p) => p.maxVolumeSizeBytes), [100 * MiB, 500 * MiB]);
  deepStrictEqual(
    [config.socketPath, config.controlSocketPath, config.driverName, config.vendorVersion],
    ["/tmp/x/csi.sock", "/tmp/x/control.sock", "d.example.com", "9.9"],
  );
  deepStrictEqual([config.topologyKey, config.stateDir, config.callLogLimit], [
    "k",
    "/tmp/x/state",
    5,
  ]);
  deepStrictEqual(config.controllerCapabilities, ["CREATE_DELETE_VOLUME", "MODIFY_VOLUME"]);
  deepStrictEqual(config.pluginCapabilities, ["CONTROLLER_SERVICE"]);
  strictEqual(outcome.logLevel, "silent");
  strictEqual(config.volumeIds, "name");
});

Deno.test("--volume-ids takes random or name only", () => {
  const base = ["--endpoint=/tmp/x/csi.sock", "--node-id=n", "--capacity=a=1Gi"];
  deepStrictEqual(problemsOf([...base, "--volume-ids=uuid"]), [
    'volume IDs "uuid" must be one of random, name',
  ]);
});

Deno.test("bad flags are all reported together", () => {
  const problems = problemsOf([
    "--endpoint",
    "tcp://127.0.0.1:9000",
    "--capacity",
    "fast",
    "--capacity=slow=lots",
    "--max-volume-size=ssd=1Gi",
    "--bogus",
    "--controller-capabilities=TIME_TRAVEL",
    "--log-level=loud",
    "--call-log-limit=many",
    "stray",
    "--driver-name",
  ]);
  const expected = [
    "not a unix socket",
    "a node id is required",
    '--capacity "fast" is not KIND=SIZE',
    '"lots" is not a size',
    'kind "ssd", which no --capacity defines',
    "unknown flag --bogus",
    'unknown controller capability "TIME_TRAVEL"',
    "--log-level must be one of",
    '--call-log-limit "many"',
    'unexpected argument "stray"',
    "--driver-name needs a value",
  ];
  for (const text of expected) {
    strictEqual(
      problems.some((p) => p.includes(text)),
      true,
      `${text}\nin:\n${problems.join("\n")}`,
    );
  }
  strictEqual(problems.length, expected.length, problems.join("\n"));
});

Deno.test("no flags at all names each required flag", () => {
  deepStrictEqual(problemsOf([]), [
    "an endpoint is required (--endpoint)",
    "a node id is required (--node-id)",
    "at least one pool is required (--capacity KIND=SIZE)",
  ]);
});

Deno.test("repeating a single-valued flag, a pool kind or sharing the socket is a problem", () => {
  const problems = problemsOf([
    "--endpoint=/tmp/a.sock",
    "--endpoint=/tmp/b.sock",
    "--node-id=n",
    "--capacity=fast=1Gi",
    "--capacity=fast=2Gi",
    "--control-endpoint=unix:///tmp/a.sock",
  ]);
  deepStrictEqual(problems, [
    "--endpoint is given more than once",
    "the control endpoint must differ from the CSI endpoint",
    'pool "fast" is given more than once',
  ]);
});

Deno.test("--help asks for the usage text, which lists every flag", () => {
  const outcome = parseDriverFlags(["--node-id=x", "--help"]);
  if (outcome.kind !== "help") throw new Error(outcome.kind);
  for (
    const flag of [
      "--endpoint",
      "--capacity",
      "--state-dir",
      "--control-endpoint",
      "--max-volume-size",
    ]
  ) {
    strictEqual(outcome.text.includes(flag), true, flag);
  }
});
