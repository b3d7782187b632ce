import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { FLAGS } from "./flags.ts";
import { parseFlagValue } from "./go_flags.ts";

// Every flag of upstream csi-provisioner v6.3 (its main, the standard sidecar flags and klog's).
const UPSTREAM_FLAGS = [
  "master",
  "volume-name-prefix",
  "volume-name-uuid-length",
  "retry-interval-start",
  "retry-interval-max",
  "worker-threads",
  "cloning-protection-threads",
  "snapshot-orphan-sweep-interval",
  "capacity-threads",
  "timeout",
  "strict-topology",
  "immediate-topology",
  "extra-create-metadata",
  "enable-pprof",
  "default-fstype",
  "kube-api-capacity-qps",
  "kube-api-capacity-burst",
  "enable-capacity",
  "capacity-for-immediate-binding",
  "capacity-poll-interval",
  "capacity-ownerref-level",
  "node-deployment",
  "node-deployment-immediate-binding",
  "node-deployment-base-delay",
  "node-deployment-max-delay",
  "controller-publish-readonly",
  "prevent-volume-mode-conversion",
  "feature-gates",
  "version",
  "kubeconfig",
  "csi-address",
  "leader-election",
  "leader-election-namespace",
  "leader-election-lease-duration",
  "leader-election-renew-deadline",
  "leader-election-retry-period",
  "leader-election-labels",
  "kube-api-qps",
  "kube-api-burst",
  "http-endpoint",
  "metrics-address",
  "metrics-path",
  "automaxprocs",
  "logging-format",
  "log-flush-frequency",
  "v",
  "vmodule",
  "log-text-split-stream",
  "log-text-info-buffer-size",
  "log-json-split-stream",
  "log-json-info-buffer-size",
];

// Flags this agent adds; each says so at the start of its usage text.
const AGENT_ADDITIONS = [
  "capacity-owner-node",
  "capacity-withdraw-after",
  "node-loss-release-after",
  "journal-path",
  "journal-dump",
  "watch-idle-timeout",
  "readiness-window",
  "enable-resizer",
];

Deno.test("the flag table has exactly upstream csi-provisioner's flags plus the listed additions", () => {
  deepStrictEqual(
    FLAGS.map((spec) => spec.name).sort(),
    [...UPSTREAM_FLAGS, ...AGENT_ADDITIONS].sort(),
  );
});

Deno.test("an addition says it is not upstream's; an upstream flag does not", () => {
  for (const spec of FLAGS) {
    strictEqual(
      spec.usage.startsWith("(csi-node-provisioner only)"),
      AGENT_ADDITIONS.includes(spec.name),
      spec.name,
    );
  }
});

Deno.test("every flag's default parses with its own parser", () => {
  for (const spec of FLAGS) ok(parseFlagValue(spec.type, spec.default).ok, spec.name);
});

Deno.test("every flag either sets a config field or says why it is a no-op", () => {
  for (const spec of FLAGS) {
    ok(
      ["version", "journal-dump"].includes(spec.name) || spec.field !== undefined ||
        spec.noop?.startsWith("no-op"),
      spec.name,
    );
  }
});
