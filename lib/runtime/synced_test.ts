import { strictEqual } from "node:assert/strict";
import { waitForSync } from "./synced.ts";

Deno.test("waitForSync() resolves once every cache listed, false when stopped first", async () => {
  let synced = false;
  const caches = [{ hasSynced: () => true }, { hasSynced: () => synced }];
  setTimeout(() => (synced = true), 60);
  strictEqual(await waitForSync(caches, new AbortController().signal), true);
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 30);
  strictEqual(await waitForSync([{ hasSynced: () => false }], stop.signal), false);
});
