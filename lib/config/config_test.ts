import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { parseConfig } from "./config.ts";
import { FLAGS } from "./flags.ts";
import type { Config, ParseOutcome } from "./types.ts";

const NODE_ENV = { NODE_NAME: "node-a" };
const BASE = ["--node-deployment", "--csi-address=/csi/csi.sock"];

function run(outcome: ParseOutcome): Config {
  if (outcome.kind !== "run") throw new Error(`expected run, got ${JSON.stringify(outcome)}`);
  return outcome.config;
}

function problems(outcome: ParseOutcome): string[] {
  if (outcome.kind !== "invalid") throw new Error(`expected invalid, got ${outcome.kind}`);
  return outcome.problems;
}

Deno.test("parseConfig() fills upstream's defaults", () => {
  const config = run(parseConfig(BASE, NODE_ENV));
  strictEqual(config.timeoutMs, 10_000);
  strictEqual(config.retryIntervalStartMs, 1000);
  strictEqual(config.retryIntervalMaxMs, 300_000);
  strictEqual(config.workerThreads, 100);
  strictEqual(config.volumeNamePrefix, "pvc");
  strictEqual(config.volumeNameUuidLength, -1);
  strictEqual(config.capacityPollIntervalMs, 60_000);
  strictEqual(config.capacityOwnerrefLevel, 1);
  strictEqual(config.kubeApiQps, 5);
  strictEqual(config.kubeApiBurst, 10);
  strictEqual(config.kubeApiCapacityQps, 1);
  strictEqual(config.kubeApiCapacityBurst, 5);
  strictEqual(config.immediateTopology, true);
  strictEqual(config.preventVolumeModeConversion, true);
  strictEqual(config.metricsPath, "/metrics");
  strictEqual(config.httpEndpoint, "");
  strictEqual(config.nodeName, "node-a");
  deepStrictEqual(config.featureGates, {
    Topology: true,
    CrossNamespaceVolumeDataSource: false,
    VolumeAttributesClass: true,
    VolumeAttributesClassExplicit: false,
    ReleaseLeaderElectionOnExit: false,
  });
});

Deno.test("parseConfig() accepts every Go flag spelling", () => {
  const config = run(parseConfig([
    "-node-deployment",
    "--csi-address",
    "unix:///csi/csi.sock",
    "-timeout=1m30s",
    "--worker-threads",
    "5",
    "--strict-topology",
    "--immediate-topology=false",
    "-v=5",
    "--feature-gates=Topology=true,VolumeAttributesClass=false",
    "--feature-gates",
    "CrossNamespaceVolumeDataSource=true",
    "--kube-api-qps=20.5",
  ], NODE_ENV));
  strictEqual(config.csiAddress, "unix:///csi/csi.sock");
  strictEqual(config.timeoutMs, 90_000);
  strictEqual(config.workerThreads, 5);
  strictEqual(config.strictTopology, true);
  strictEqual(config.immediateTopology, false);
  strictEqual(config.verbosity, 5);
  strictEqual(config.kubeApiQps, 20.5);
  strictEqual(config.featureGates.VolumeAttributesClass, false);
  strictEqual(config.featureGates.VolumeAttributesClassExplicit, true);
  strictEqual(config.featureGates.CrossNamespaceVolumeDataSource, true);
  strictEqual(run(parseConfig([...BASE, "--v=3"], NODE_ENV)).verbosity, 3);
  strictEqual(run(parseConfig([...BASE, "-v", "4"], NODE_ENV)).verbosity, 4);
});

Deno.test("--logging-format is text by default, json on request, and nothing else", () => {
  strictEqual(run(parseConfig(BASE, NODE_ENV)).loggingFormat, "text");
  strictEqual(run(parseConfig([...BASE, "--logging-format=json"], NODE_ENV)).loggingFormat, "json");
  deepStrictEqual(problems(parseConfig([...BASE, "--logging-format=logfmt"], NODE_ENV)), [
    '--logging-format must be "text" or "json", got "logfmt"',
  ]);
});

Deno.test("parseConfig() takes the last value of a repeated flag", () => {
  strictEqual(
    run(parseConfig([...BASE, "--timeout=5s", "--timeout=7s"], NODE_ENV)).timeoutMs,
    7000,
  );
});

Deno.test("parseConfig() accepts the no-op flags of the Go sidecar", () => {
  const argv = [
    ...BASE,
    "--enable-pprof",
    "--automaxprocs",
    "--logging-format=json",
    "--log-flush-frequency=10s",
    "--vmodule=controller=5",
    "--leader-election-namespace=kube-system",
    "--leader-election-lease-duration=30s",
    "--leader-election-labels=app:csi,tier:node",
    "--log-json-split-stream",
    "--log-text-info-buffer-size=1Mi",
  ];
  strictEqual(parseConfig(argv, NODE_ENV).kind, "run");
});

Deno.test("parseConfig() reports every problem at once, naming flag and value", () => {
  const found = problems(parseConfig([
    "--timeout=soon",
    "--worker-threads=many",
    "--bogus",
    "--strict-topology=maybe",
    "--feature-gates=Foo=true",
    "stray",
    "--csi-address",
  ], {}));
  deepStrictEqual(found, [
    'invalid value "soon" for flag --timeout: time: invalid duration "soon"',
    'invalid value "many" for flag --worker-threads: parsing "many": invalid syntax',
    "flag provided but not defined: --bogus",
    'invalid value "maybe" for flag --strict-topology: strconv.ParseBool: parsing "maybe": invalid syntax',
    'unexpected argument "stray": the agent takes flags only (a value given to a boolean flag must be written --flag=value)',
    "flag needs an argument: --csi-address",
    "unrecognized feature gate: Foo",
    "--node-deployment must be set: csi-node-provisioner only runs as a per-node agent (there is no central mode; use external-provisioner for that)",
  ]);
});

Deno.test("parseConfig() names the real flag --node-deployment when NODE_NAME is missing", () => {
  deepStrictEqual(problems(parseConfig(BASE, {})), [
    "The NODE_NAME environment variable must be set when using --node-deployment (set it from the downward API: spec.nodeName)",
  ]);
});

Deno.test("parseConfig() refuses --leader-election in node mode and says why", () => {
  const [problem] = problems(parseConfig([...BASE, "--leader-election"], NODE_ENV));
  ok(problem?.startsWith("--leader-election cannot be used with --node-deployment"));
  ok(problem?.includes("same Lease"));
  strictEqual(parseConfig([...BASE, "--leader-election=false"], NODE_ENV).kind, "run");
});

Deno.test("parseConfig() needs NAMESPACE and POD_NAME for owned capacity objects", () => {
  const found = problems(parseConfig([...BASE, "--enable-capacity"], NODE_ENV));
  ok(found[0]?.startsWith("need NAMESPACE env variable for CSIStorageCapacity objects"));
  ok(found[1]?.startsWith("need POD_NAME env variable to determine CSIStorageCapacity owner"));
  const unowned = parseConfig(
    [...BASE, "--enable-capacity", "--capacity-ownerref-level=-1"],
    { ...NODE_ENV, NAMESPACE: "kube-system" },
  );
  strictEqual(unowned.kind, "run");
});

Deno.test("parseConfig(): --capacity-owner-node needs no POD_NAME and wins over the level", () => {
  const config = run(parseConfig(
    [...BASE, "--enable-capacity", "--capacity-owner-node", "--capacity-ownerref-level=1"],
    { ...NODE_ENV, NAMESPACE: "kube-system" },
  ));
  strictEqual(config.capacityOwnerNode, true);
  strictEqual(run(parseConfig(BASE, NODE_ENV)).capacityOwnerNode, false);
  const [problem] = problems(parseConfig([...BASE, "--enable-capacity"], {
    ...NODE_ENV,
    NAMESPACE: "kube-system",
  }));
  ok(problem?.includes("--capacity-owner-node"));
});

Deno.test("parseConfig() refuses --metrics-address together with --http-endpoint", () => {
  const found = problems(
    parseConfig([...BASE, "--metrics-address=:8080", "--http-endpoint=:8081"], NODE_ENV),
  );
  deepStrictEqual(found, [
    "only one of --metrics-address and --http-endpoint can be set (--metrics-address is deprecated)",
  ]);
  strictEqual(
    run(parseConfig([...BASE, "--metrics-address=:9090"], NODE_ENV)).httpEndpoint,
    ":9090",
  );
});

Deno.test("parseConfig() lets KUBECONFIG override --kubeconfig", () => {
  const config = run(
    parseConfig([...BASE, "--kubeconfig=/flag"], { ...NODE_ENV, KUBECONFIG: "/env" }),
  );
  strictEqual(config.kubeconfig, "/env");
});

Deno.test("parseConfig() answers --version before checking the environment", () => {
  deepStrictEqual(parseConfig(["--version"], {}), { kind: "version" });
});

Deno.test("parseConfig() answers --help with text generated from the flag table", () => {
  const outcome = parseConfig(["-h"], {});
  if (outcome.kind !== "help") throw new Error(outcome.kind);
  for (const spec of FLAGS) ok(outcome.text.includes(`--${spec.name}`), spec.name);
  ok(outcome.text.includes("(default 10s)"));
  ok(outcome.text.includes('(default "/run/csi/socket")'));
  strictEqual(parseConfig(["--help"], {}).kind, "help");
});

Deno.test("parseConfig() rejects values no agent can run with", () => {
  const found = problems(parseConfig([
    ...BASE,
    "--worker-threads=0",
    "--timeout=0s",
    "--retry-interval-start=10s",
    "--retry-interval-max=1s",
    "--volume-name-prefix=",
    "--volume-name-uuid-length=0",
    "--metrics-path=metrics",
    "--http-endpoint=localhost",
    "--feature-gates=Topology=false",
  ], NODE_ENV));
  deepStrictEqual(found, [
    "--feature-gates=Topology=false cannot be used with --node-deployment: without topology, PVs carry no node affinity and no agent can tell which node holds a volume",
    "--volume-name-prefix: volume name prefix cannot be of length 0",
    "--volume-name-uuid-length must be -1 (whole UID) or at least 1, got 0",
    "--worker-threads must be at least 1, got 0",
    "--timeout must be a positive duration, got 0ms",
    "--retry-interval-max (1000ms) must not be shorter than --retry-interval-start (10000ms)",
    '--metrics-path must start with "/", got "metrics"',
    '--http-endpoint must be host:port or :port, got "localhost"',
  ]);
});

Deno.test("--journal-path defaults to the directory of the CSI socket", () => {
  strictEqual(
    run(parseConfig(BASE, NODE_ENV)).journalPath,
    "/csi/csi-node-provisioner-journal.json",
  );
  strictEqual(
    run(
      parseConfig([BASE[0]!, "--csi-address=unix:///var/lib/kubelet/plugins/d/csi.sock"], NODE_ENV),
    )
      .journalPath,
    "/var/lib/kubelet/plugins/d/csi-node-provisioner-journal.json",
  );
  strictEqual(
    run(parseConfig([BASE[0]!, "--csi-address=/csi.sock"], NODE_ENV)).journalPath,
    "/csi-node-provisioner-journal.json",
  );
  strictEqual(
    run(parseConfig([...BASE, "--journal-path=/var/lib/j.json"], NODE_ENV)).journalPath,
    "/var/lib/j.json",
  );
});

Deno.test("--journal-dump asks for the journal's path and nothing else", () => {
  deepStrictEqual(parseConfig([...BASE, "--journal-dump"], {}), {
    kind: "journalDump",
    path: "/csi/csi-node-provisioner-journal.json",
  });
});

Deno.test("parseConfig() refuses a NODE_NAME no Node can have, and accepts long real ones", () => {
  const long = `n${"a".repeat(200)}.example.com`; // a valid 213-character node name
  strictEqual(run(parseConfig(BASE, { NODE_NAME: long })).nodeName, long);
  for (const name of ["Node_A", "node a", "-node", `n${"a".repeat(253)}`]) {
    const found = problems(parseConfig(BASE, { NODE_NAME: name }));
    strictEqual(found.length, 1, name);
    ok(
      found[0]?.includes("cannot be a node's name: a node name is at most 253 characters"),
      String(found[0]),
    );
  }
});

Deno.test("parseConfig() reads --watch-idle-timeout and --readiness-window (defaults 1m30s, 30s)", () => {
  const defaults = run(parseConfig(BASE, NODE_ENV));
  deepStrictEqual([defaults.watchIdleTimeoutMs, defaults.readinessWindowMs], [90_000, 30_000]);
  const set = run(
    parseConfig([...BASE, "--watch-idle-timeout=2m", "--readiness-window=1m"], NODE_ENV),
  );
  deepStrictEqual([set.watchIdleTimeoutMs, set.readinessWindowMs], [120_000, 60_000]);
  deepStrictEqual(problems(parseConfig([...BASE, "--readiness-window=0s"], NODE_ENV)), [
    "--readiness-window must be a positive duration, got 0ms",
  ]);
});

Deno.test("parseConfig() reads --capacity-withdraw-after (default 5m, 0 disables, negative refused)", () => {
  strictEqual(run(parseConfig(BASE, NODE_ENV)).capacityWithdrawAfterMs, 300_000);
  const off = run(parseConfig([...BASE, "--capacity-withdraw-after=0"], NODE_ENV));
  strictEqual(off.capacityWithdrawAfterMs, 0);
  deepStrictEqual(problems(parseConfig([...BASE, "--capacity-withdraw-after=-1s"], NODE_ENV)), [
    "--capacity-withdraw-after must not be negative (0 disables it), got -1000ms",
  ]);
});

Deno.test("parseConfig() reads --node-loss-release-after (default off; needs --enable-capacity)", () => {
  strictEqual(run(parseConfig(BASE, NODE_ENV)).nodeLossReleaseAfterMs, 0);
  const on = ["--enable-capacity", "--capacity-owner-node", "--node-loss-release-after=30m"];
  const env = { ...NODE_ENV, NAMESPACE: "csi" };
  strictEqual(run(parseConfig([...BASE, ...on], env)).nodeLossReleaseAfterMs, 1_800_000);
  deepStrictEqual(problems(parseConfig([...BASE, "--node-loss-release-after=1h"], NODE_ENV)), [
    "--node-loss-release-after needs --enable-capacity: only the agents that publish capacity renew and watch the Leases that tell which nodes are gone",
  ]);
  deepStrictEqual(problems(parseConfig([...BASE, "--node-loss-release-after=-1s"], NODE_ENV)), [
    "--node-loss-release-after must not be negative (0 disables it), got -1000ms",
  ]);
});
