import { deepStrictEqual, throws } from "node:assert/strict";
import { assertFleetFits, availableMiB, fleetNeedsMiB, largestFleet } from "./fleet_memory.ts";

Deno.test("availableMiB() reads MemAvailable of /proc/meminfo", () => {
  const meminfo = "MemTotal:       24576000 kB\nMemAvailable:    2097152 kB\n";
  deepStrictEqual(availableMiB(meminfo), 2048);
});

Deno.test("assertFleetFits() names the memory and the largest fleet that fits", () => {
  const available = fleetNeedsMiB(20);
  assertFleetFits(20, available);
  deepStrictEqual(largestFleet(available), 20);
  throws(() => assertFleetFits(50, available), /only .* GiB is available .* --nodes 20$/);
});
