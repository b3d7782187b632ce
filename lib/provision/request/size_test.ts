import { deepStrictEqual } from "node:assert/strict";
import { requiredBytes } from "./size.ts";
import { claim } from "../../../tests/builders/provision.ts";

function sized(storage: string) {
  return requiredBytes(claim({ spec: { resources: { requests: { storage } } } }));
}

Deno.test("requiredBytes() is the exact byte count, without rounding to allocation units", () => {
  deepStrictEqual(sized("1Gi"), { ok: true, value: 1073741824n });
  deepStrictEqual(sized("1G"), { ok: true, value: 1000000000n });
  deepStrictEqual(sized("1000001"), { ok: true, value: 1000001n });
  deepStrictEqual(sized("9223372036854775807"), { ok: true, value: 9223372036854775807n });
});

Deno.test("requiredBytes() rounds a fractional request up to a whole byte, like Quantity.Value()", () => {
  deepStrictEqual(sized("1500m"), { ok: true, value: 2n });
  deepStrictEqual(sized("0.5"), { ok: true, value: 1n });
});

Deno.test("requiredBytes() refuses a request that rounds to nothing", () => {
  deepStrictEqual(sized("0.0"), {
    ok: false,
    error:
      'storage request "0.0" must be greater than zero (PersistentVolumeClaim "apps/data", spec.resources.requests.storage)',
  });
});
