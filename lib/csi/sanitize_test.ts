import { deepStrictEqual } from "node:assert/strict";
import { sanitizeCsiMessage } from "./sanitize.ts";

Deno.test("sanitizeCsiMessage() strips secrets at any depth and keeps everything else", () => {
  const request = {
    name: "pvc-1",
    secrets: { password: "hunter2" },
    parameters: { kind: "fast" },
    nested: [{ secrets: { token: "x" }, keep: 1 }],
  };
  deepStrictEqual(sanitizeCsiMessage(request), {
    name: "pvc-1",
    secrets: "***stripped***",
    parameters: { kind: "fast" },
    nested: [{ secrets: "***stripped***", keep: 1 }],
  });
  deepStrictEqual(request.secrets, { password: "hunter2" }, "the original is not changed");
});
