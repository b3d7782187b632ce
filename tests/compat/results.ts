/**
 * What one compatibility run found, read from `deno test` output, and the
 * Markdown file it is recorded in (tests/compat/results/<minor>.md).
 */

export interface SuiteResult {
  file: string;
  /** "passed", "failed", or "error" when deno test printed no summary (e.g. a type error). */
  outcome: "passed" | "failed" | "error";
  passed: number;
  failed: number;
  ignored: number;
  /** Steps, as deno counts them in parentheses. */
  passedSteps: number;
  failedSteps: number;
  /** The FAILURES section: one line per failed test or step. */
  failures: string[];
  /** deno test's own duration, e.g. "1m 32s" (without the wait for the lock). */
  duration: string;
}

export interface CompatRun {
  minor: string;
  /** `kube-apiserver --version`, e.g. "Kubernetes v1.34.4". */
  apiserverVersion: string;
  /** ISO date and time (UTC) of the start of the run. */
  date: string;
  /** `git rev-parse --short HEAD`, with "+ uncommitted changes" when the tree was dirty. */
  commit: string;
  /** Where etcd and csi-provisioner came from, and their versions. */
  peers: string;
  suites: SuiteResult[];
}

const SUMMARY =
  /^(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \((\d+) steps?\))?(?: \| (\d+) ignored)?.*?(?:\(([^()]+)\))?$/m;

/** Reads deno test's (colorless) output: its summary line and FAILURES section. */
export function parseDenoTest(file: string, output: string, exitOk: boolean): SuiteResult {
  const summary = output.match(SUMMARY);
  const number = (index: number) => Number(summary?.[index] ?? 0);
  const outcome = !summary ? "error" : summary[1] === "ok" && exitOk ? "passed" : "failed";
  return {
    file,
    outcome,
    passed: number(2),
    failed: number(4),
    ignored: number(6),
    passedSteps: number(3),
    failedSteps: number(5),
    failures: failuresSection(output),
    duration: summary?.[7] ?? "",
  };
}

function failuresSection(output: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => line.trim() === "FAILURES");
  if (start < 0) return [];
  const failures: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") {
      if (failures.length > 0) break;
      continue;
    }
    failures.push(line.replace(/\s+=> \S+$/, "").trim());
  }
  return failures;
}

/** "12 passed (30 steps), 1 failed (2 steps)". */
export function counts(suite: SuiteResult): string {
  const steps = (n: number) => (n > 0 ? ` (${n} step${n === 1 ? "" : "s"})` : "");
  const parts = [
    `${suite.passed} passed${steps(suite.passedSteps)}`,
    `${suite.failed} failed${steps(suite.failedSteps)}`,
  ];
  if (suite.ignored > 0) parts.push(`${suite.ignored} ignored`);
  return parts.join(", ");
}

export function renderRun(run: CompatRun): string {
  const rows = run.suites.map((suite) =>
    `| \`${suite.file}\` | ${suite.outcome} | ${counts(suite)} | ${suite.duration} |`
  );
  const failures = run.suites.filter((suite) => suite.failures.length > 0).flatMap((suite) => [
    "",
    `Failed in \`${suite.file}\`:`,
    "",
    ...suite.failures.map((failure) => `- ${failure}`),
  ]);
  return [
    `# Compatibility run: Kubernetes ${run.minor}`,
    "",
    "Written by `deno task compat -- " + run.minor + "` (tests/compat); see docs/compatibility.md.",
    "",
    `- Date: ${run.date}`,
    `- Commit: ${run.commit}`,
    `- \`kube-apiserver --version\`: ${run.apiserverVersion}`,
    `- etcd and csi-provisioner: ${run.peers}`,
    "",
    "| Suite | Result | Tests | Time |",
    "| ----- | ------ | ----- | ---- |",
    ...rows,
    ...failures,
    "",
  ].join("\n");
}

const TABLE_START = "<!-- compat:table -->";
const TABLE_END = "<!-- /compat:table -->";

/** "tests/integration/capacity_agents_test.ts" → "capacity agents". */
function suiteName(file: string): string {
  return (file.split("/").pop() ?? file).replace(/_test\.ts$/, "").replaceAll("_", " ");
}

function cell(suite: SuiteResult | undefined): string {
  if (!suite) return "not run";
  if (suite.outcome === "passed") return "passed";
  if (suite.outcome === "error") return "error";
  return `failed ${suite.failed} of ${suite.passed + suite.failed}`;
}

/** One row per run, one column per suite any run has, versions in order. */
export function renderTable(runs: CompatRun[]): string {
  const sorted = [...runs].sort((a, b) => a.minor.localeCompare(b.minor, "en", { numeric: true }));
  const files = [...new Set(sorted.flatMap((run) => run.suites.map((suite) => suite.file)))];
  const header = ["Kubernetes", "Date", "Commit", ...files.map(suiteName)];
  const rows = sorted.map((run) => [
    run.apiserverVersion.replace(/^Kubernetes /, ""),
    run.date.slice(0, 10),
    run.commit,
    ...files.map((file) => cell(run.suites.find((suite) => suite.file === file))),
  ]);
  return [header, header.map(() => "---"), ...rows].map((row) => `| ${row.join(" | ")} |`)
    .join("\n");
}

/** The document with the text between the table markers replaced. */
export function replaceTable(document: string, table: string): string {
  const start = document.indexOf(TABLE_START);
  const end = document.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`the document has no ${TABLE_START} ... ${TABLE_END} markers`);
  }
  return `${document.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${document.slice(end)}`;
}
