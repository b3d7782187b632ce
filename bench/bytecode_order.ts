/**
 * `deno task bytecode-order`: records deploy/image/bytecode.order, the order
 * in which the agent first runs its functions, for `bun build
 * --bytecode-order` (deploy/image/compile.ts says what it buys).
 *
 * The agent is compiled without an order and run through
 * tests/deploy/bytecode_recording.ts's recording: a one-node test cluster,
 * deploy/daemonset.yaml's flags, a few claims provisioned and their volumes
 * deleted, SIGTERM. Run it again when `bytecode-order` in tests/e2e says the
 * file has gone stale (after a Bun upgrade, or once enough of the code has
 * changed).
 */
import { join } from "node:path";
import { BYTECODE_ORDER_FILE } from "../deploy/image/compile.ts";
import { recordBytecodeOrder } from "../tests/deploy/bytecode_recording.ts";
import { compileWithAgentFlags } from "./floor.ts";

const REPO = new URL("..", import.meta.url).pathname;

async function main(): Promise<void> {
  const log = (line: string) => console.error(line);
  const dir = await Deno.makeTempDir({ prefix: "bytecode-order-" });
  try {
    const binary = await compileWithAgentFlags("main.ts", {
      outfile: join(dir, "csi-node-provisioner"),
      commit: "bytecode-order",
    });
    const orderOut = join(dir, "bytecode.order");
    const entries = await recordBytecodeOrder({ binary, orderOut, deletesVolumes: true }, log);
    await Deno.copyFile(orderOut, join(REPO, BYTECODE_ORDER_FILE));
    log(
      `${BYTECODE_ORDER_FILE}: ${entries.length} functions and modules in the order they first ran`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
