import assert from "node:assert/strict";
import { type CompatRun, parseDenoTest, renderRun, renderTable, replaceTable } from "./results.ts";

// deno test's output (NO_COLOR) for a file with a failing step, a passing test and an ignored one.
const FAILED_OUTPUT = `running 3 tests from ./x_test.ts
outer ...
  good ... ok (0ms)
  bad ... FAILED (1ms)
outer ... FAILED (due to 1 failed step) (4ms)
fine ... ok (90µs)
skipped ... ignored (0ms)

 ERRORS 

outer ... bad => ./x_test.ts:3:11
error: Error: boom

 FAILURES 

outer ... bad => ./x_test.ts:3:11

FAILED | 1 passed (1 step) | 1 failed (1 step) | 1 ignored (21ms)

error: Test failed
`;

const PASSED_OUTPUT = `running 1 test from ./tests/integration/provision_test.ts
provision ... ok (12s)

ok | 1 passed (7 steps) | 0 failed (13s)
`;

Deno.test("a failed file: counts of tests and steps, and the failed step's name", () => {
  const suite = parseDenoTest("x_test.ts", FAILED_OUTPUT, false);
  assert.deepEqual(suite, {
    file: "x_test.ts",
    outcome: "failed",
    passed: 1,
    failed: 1,
    ignored: 1,
    passedSteps: 1,
    failedSteps: 1,
    failures: ["outer ... bad"],
    duration: "21ms",
  });
});

Deno.test("a passed file; and one without a summary (a type error) is an error", () => {
  const passed = parseDenoTest("p_test.ts", PASSED_OUTPUT, true);
  assert.equal(passed.outcome, "passed");
  assert.equal(passed.passedSteps, 7);
  assert.deepEqual(passed.failures, []);
  const broken = parseDenoTest("p_test.ts", "error: TS2345 [ERROR]: ...\n", false);
  assert.equal(broken.outcome, "error");
  // A summary saying ok with a failing exit code (e.g. a leak reported after it) is a failure.
  assert.equal(parseDenoTest("p_test.ts", PASSED_OUTPUT, false).outcome, "failed");
});

Deno.test("the results file: date, commit, apiserver version, a row per file, what failed", () => {
  const run: CompatRun = {
    minor: "1.34",
    apiserverVersion: "Kubernetes v1.34.4",
    date: "2026-12-02T08:00Z",
    commit: "abc1234",
    peers: "the default build (etcd Version: 3.6.11, csi-provisioner v6.3.0)",
    suites: [
      parseDenoTest("tests/integration/provision_test.ts", PASSED_OUTPUT, true),
      parseDenoTest("x_test.ts", FAILED_OUTPUT, false),
    ],
  };
  const text = renderRun(run);
  assert.match(text, /^# Compatibility run: Kubernetes 1\.34$/m);
  assert.match(text, /^- Date: 2026-12-02T08:00Z$/m);
  assert.match(text, /^- Commit: abc1234$/m);
  assert.match(text, /^- `kube-apiserver --version`: Kubernetes v1\.34\.4$/m);
  assert.match(
    text,
    /^\| `tests\/integration\/provision_test\.ts` \| passed \| 1 passed \(7 steps\), 0 failed \| 13s \|$/m,
  );
  assert.match(
    text,
    /^\| `x_test\.ts` \| failed \| 1 passed \(1 step\), 1 failed \(1 step\), 1 ignored \| 21ms \|$/m,
  );
  assert.match(text, /Failed in `x_test\.ts`:\n\n- outer \.\.\. bad\n/);
});

Deno.test("the table: a row per version in order, a column per suite, failures counted", () => {
  const run = (minor: string, output: string, ok: boolean): CompatRun => ({
    minor,
    apiserverVersion: `Kubernetes v${minor}.1`,
    date: "2026-12-02T08:00Z",
    commit: "abc1234",
    peers: "",
    suites: [parseDenoTest("tests/integration/provision_test.ts", output, ok)],
  });
  const table = renderTable([run("1.37", FAILED_OUTPUT, false), run("1.34", PASSED_OUTPUT, true)]);
  assert.equal(
    table,
    [
      "| Kubernetes | Date | Commit | provision |",
      "| --- | --- | --- | --- |",
      "| v1.34.1 | 2026-12-02 | abc1234 | passed |",
      "| v1.37.1 | 2026-12-02 | abc1234 | failed 1 of 2 |",
    ].join("\n"),
  );
});

Deno.test("the table replaces what is between its markers, and nothing else", () => {
  const document = "# T\n\n<!-- compat:table -->\nold\n<!-- /compat:table -->\n\nafter\n";
  assert.equal(
    replaceTable(document, "| new |"),
    "# T\n\n<!-- compat:table -->\n\n| new |\n\n<!-- /compat:table -->\n\nafter\n",
  );
  assert.throws(() => replaceTable("# T\n", "x"), /no <!-- compat:table -->/);
});
