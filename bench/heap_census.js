// A heap census of the compiled agent during a benchmark (diagnostic, never
// shipped): Bun loads this before the agent through BUN_OPTIONS="--preload",
// which reaches a compiled binary too (bench/census_binary.sh). Plain
// JavaScript because it uses Bun's own modules, which deno check cannot see.
//
// CENSUS_MODE=peak: at every new RSS maximum above CENSUS_MIN_MIB, bun:jsc's
//   heapStats() (object counts by type, heap size and capacity) and
//   /proc/self/smaps_rollup; the file keeps the census at the highest RSS.
// CENSUS_MODE=gc: the first time RSS reaches CENSUS_MIN_MIB, a census, a full
//   collection (Bun.gc(true)), and a census again: what of the heap was live.
// Written as JSON to CENSUS_OUT every 100 ms while it changes.
import { heapStats } from "bun:jsc";
import { writeFileSync } from "node:fs";
import { residentSplitMiB } from "./process_stats.ts";

const out = process.env.CENSUS_OUT ?? `/tmp/heap-census-${process.pid}.json`;
const mode = process.env.CENSUS_MODE ?? "peak";
const minMiB = Number(process.env.CENSUS_MIN_MIB ?? "90");

function smaps() {
  const { anonymous, file } = residentSplitMiB(process.pid);
  return { rssMiB: anonymous + file, anonymousMiB: anonymous };
}

function census(label) {
  const stats = heapStats();
  const top = Object.entries(stats.objectTypeCounts).sort((a, b) => b[1] - a[1]).slice(0, 40);
  return {
    label,
    at: Date.now(),
    ...smaps(),
    heapSizeMiB: stats.heapSize / 2 ** 20,
    heapCapacityMiB: stats.heapCapacity / 2 ** 20,
    extraMemoryMiB: stats.extraMemorySize / 2 ** 20,
    objectCount: stats.objectCount,
    objectTypeCounts: top,
  };
}

let highest = 0;
let done = false;
const records = [];
setInterval(() => {
  if (done) return;
  const { rssMiB } = smaps();
  if (rssMiB < minMiB) return;
  if (mode === "gc") {
    records.push(census("before a full collection"));
    Bun.gc(true);
    records.push(census("after it"));
    done = true;
  } else if (rssMiB > highest) {
    highest = rssMiB;
    records.length = 0;
    records.push(census(`highest RSS so far, ${rssMiB.toFixed(1)} MiB`));
  } else {
    return;
  }
  writeFileSync(out, JSON.stringify(records, null, 1));
}, 100).unref();
