/** Test steps on a running cluster. */

import type { RunningCluster } from "./running_cluster.ts";

/** A test step that prints the tail of every log of the cluster when it fails. */
export async function step(
  t: Deno.TestContext,
  cluster: Pick<RunningCluster, "tailLogs">,
  name: string,
  body: () => Promise<void>,
): Promise<void> {
  const passed = await t.step(name, async () => {
    try {
      await body();
    } catch (error) {
      console.error(await cluster.tailLogs(30));
      throw error;
    }
  });
  if (!passed) throw new Error(`step failed: ${name}`);
}
