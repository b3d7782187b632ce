import { strictEqual } from "node:assert/strict";
import { renderTable } from "./table.ts";

Deno.test("renderTable aligns columns under their headers", () => {
  const text = renderTable(
    [{ header: "pod" }, { header: "size", align: "right" }],
    [["db", "6Gi"], ["archive", "20Gi"]],
  );
  strictEqual(
    text,
    [
      "  pod      size",
      "  -------  ----",
      "  db        6Gi",
      "  archive  20Gi",
    ].join("\n"),
  );
});
