import { strictEqual } from "node:assert/strict";
import { boundClaim } from "../../../tests/builders/resize.ts";
import { expansionText } from "./expansion.ts";

Deno.test("expansionText(): a claim whose expansion failed says so, and how to recover", () => {
  const failed = boundClaim({
    request: "20Gi",
    status: {
      allocatedResources: { storage: "20Gi" },
      allocatedResourceStatuses: { storage: "ControllerResizeInfeasible" },
      conditions: [{ type: "ControllerResizeError", status: "True", message: "failed: too big" }],
    },
  });
  strictEqual(
    expansionText(failed),
    "expansion to 20Gi failed: failed: too big; lower the request (not below 1Gi) to recover",
  );
});

Deno.test("expansionText(): pending on the node, not started, or nothing asked", () => {
  const pending = boundClaim({
    status: {
      allocatedResources: { storage: "2Gi" },
      allocatedResourceStatuses: { storage: "NodeResizePending" },
    },
  });
  strictEqual(expansionText(pending)?.startsWith("volume expanded to 2Gi; the file system"), true);
  strictEqual(expansionText(boundClaim())?.includes("--enable-resizer"), true);
  strictEqual(expansionText(boundClaim({ request: "1Gi" })), undefined);
});
