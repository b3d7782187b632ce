/**
 * The compiled binary and its intent journal as an operator meets them: run
 * as a uid that may not write the journal's directory or reach the driver's
 * socket, it says so once and exits 2; two agents given one journal (a
 * rollout's surge, the same node twice) never write it together: the second
 * waits for the first one's lock, not ready and saying why, and takes over
 * once the first is killed.
 */
import { ok, strictEqual } from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import { spawnTestDriver } from "../csi_driver/spawn.ts";
import { BINARY, cleanUp, requireBinary, startAgent, waitReady } from "./agent_process.ts";

const NOBODY = 65534;

/** The binary as uid/gid 65534, the way a pod with runAsUser: 65534 runs it. */
async function runAsNobody(args: string[]): Promise<{ code: number; stderr: string }> {
  const output = await new Deno.Command("setpriv", {
    args: ["--reuid", `${NOBODY}`, "--regid", `${NOBODY}`, "--clear-groups", BINARY, ...args],
    env: { NODE_NAME: "node-a" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("as a non-root uid: a journal directory it may not write, then a root-only driver socket: each one message and exit 2", async () => {
  requireBinary();
  const dir = mkdtempSync(join(tmpdir(), "agent-nonroot-"));
  chmodSync(dir, 0o755);
  const driver = await spawnTestDriver({
    endpoint: `unix://${join(dir, "csi.sock")}`,
    controlEndpoint: `unix://${join(dir, "control.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "1Gi" }],
  });
  try {
    const rootJournal = await runAsNobody([
      "--node-deployment",
      `--csi-address=${join(dir, "csi.sock")}`,
      `--journal-path=${join(dir, "journal", "journal.json")}`,
    ]);
    strictEqual(rootJournal.code, 2, rootJournal.stderr);
    ok(
      rootJournal.stderr.includes(
        `the intent journal's directory ${join(dir, "journal")} is not writable by uid ${NOBODY} ` +
          "(EACCES): run the agent as root",
      ),
      rootJournal.stderr,
    );
    const journalDir = join(dir, "nobody");
    mkdirSync(journalDir);
    chownSync(journalDir, NOBODY, NOBODY);
    const rootSocket = await runAsNobody([
      "--node-deployment",
      `--csi-address=${join(dir, "csi.sock")}`,
      `--journal-path=${join(journalDir, "journal.json")}`,
    ]);
    strictEqual(rootSocket.code, 2, rootSocket.stderr);
    ok(
      rootSocket.stderr.includes(
        `the CSI driver socket ${join(dir, "csi.sock")} is not accessible to uid ${NOBODY} ` +
          "(EACCES): run the agent as root",
      ),
      rootSocket.stderr,
    );
  } finally {
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("two compiled agents given one journal: the second waits for the lock, not ready and saying why, and takes over when the first is killed", async () => {
  await using cluster = await startCluster({ nodes: 1, driver: "none", storageClasses: false });
  const journalDir = mkdtempSync(join(tmpdir(), "agent-shared-journal-"));
  const journal = join(journalDir, "journal.json");
  const first = await startAgent(cluster, { args: [`--journal-path=${journal}`] });
  const second = await startAgent(cluster, { args: [`--journal-path=${journal}`] });
  try {
    await waitReady(first);
    const body = await waitFor(async () => {
      const response = await fetch(`${second.url}/readyz`);
      const text = await response.text();
      return response.status === 503 && text.includes("journal: waiting") ? text : undefined;
    }, { description: "the second agent to wait for the lock", timeoutMs: 20_000 });
    ok(
      body.includes(
        `journal: waiting for the intent journal's lock ${journal}.lock: another agent on this ` +
          `node holds it and writes ${journal}`,
      ),
      body,
    );
    ok(second.log().includes("waiting for the intent journal's lock"), second.log());
    await first.agent.kill();
    await waitReady(second);
    ok(second.log().includes("Intent journal lock taken"), second.log());
  } finally {
    await cleanUp(first);
    await cleanUp(second);
    rmSync(journalDir, { recursive: true, force: true });
  }
});
