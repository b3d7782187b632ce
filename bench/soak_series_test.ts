import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  leastSquares,
  minMaxEnd,
  rssTrend,
  sampleAtOrAfter,
  seriesColumns,
  seriesCsv,
  type SoakSample,
} from "./soak_series.ts";

function sample(t: number, rssMiB: number, gauges: Record<string, number> = {}): SoakSample {
  return {
    t,
    rssMiB,
    rssAnonMiB: rssMiB - 50,
    rssFileMiB: 50,
    fds: 20,
    csi: 1,
    threads: 8,
    cpuS: t / 10,
    gauges,
  };
}

const near = (actual: number, expected: number) =>
  strictEqual(Math.abs(actual - expected) < 1e-9, true, `${actual} is not ${expected}`);

Deno.test("leastSquares() fits a line exactly and averages noise out", () => {
  const exact = leastSquares([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }]);
  near(exact.slope, 2);
  near(exact.intercept, 1);
  const noisy = leastSquares([{ x: 0, y: 1 }, { x: 1, y: 0 }, { x: 2, y: 1 }, { x: 3, y: 0 }]);
  near(noisy.slope, -0.2);
  throws(() => leastSquares([{ x: 1, y: 1 }]), /two distinct/);
  throws(() => leastSquares([{ x: 1, y: 1 }, { x: 1, y: 2 }]), /two distinct/);
});

Deno.test("rssTrend() fits only the samples from warm-up end on", () => {
  // Warm-up grows fast (50 → 100 MiB), then 1 MiB per 15 s from t = 30 on.
  const samples = [
    sample(0, 50),
    sample(15, 90),
    sample(30, 100),
    sample(45, 101),
    sample(60, 102),
  ];
  const trend = rssTrend(samples, 25);
  strictEqual(trend.warmupEndS, 30);
  near(trend.slopeMiBPerHour, 240);
  near(trend.driftPercent, 2);
});

Deno.test("rssTrend() fits the part of RSS it is given to read", () => {
  // Total 100 → 102 while file pages stay at 50: the anonymous part drifts 50 → 52.
  const samples = [sample(30, 100), sample(45, 101), sample(60, 102)];
  near(rssTrend(samples, 30, (s) => s.rssAnonMiB).driftPercent, 4);
  near(rssTrend(samples, 30, (s) => s.rssFileMiB).driftPercent, 0);
});

Deno.test("rssTrend() of a flat line is zero, whatever the warm-up did", () => {
  const samples = [sample(0, 10), sample(15, 80), sample(30, 80), sample(45, 80)];
  const trend = rssTrend(samples, 30);
  near(trend.slopeMiBPerHour, 0);
  near(trend.driftPercent, 0);
});

Deno.test("sampleAtOrAfter() takes the first sample not before the time, else the last", () => {
  const samples = [sample(0, 1), sample(15, 2), sample(30, 3)];
  strictEqual(sampleAtOrAfter(samples, 15).rssMiB, 2);
  strictEqual(sampleAtOrAfter(samples, 16).rssMiB, 3);
  strictEqual(sampleAtOrAfter(samples, 99).rssMiB, 3);
  throws(() => sampleAtOrAfter([], 0), /no samples/);
});

Deno.test("minMaxEnd() summarizes a series; an empty one is an error", () => {
  deepStrictEqual(minMaxEnd([3, 1, 4, 2]), { min: 1, max: 4, end: 2 });
  throws(() => minMaxEnd([]), /empty/);
});

Deno.test("seriesColumns() and seriesCsv() keep every field and gauge, blanks where absent", () => {
  const ours = seriesColumns([sample(0, 80.04), sample(15, 81.26, { nodejs_heap: 5 })]);
  deepStrictEqual(ours, {
    t: [0, 15],
    rssMiB: [80, 81.3],
    rssAnonMiB: [30, 31.3],
    rssFileMiB: [50, 50],
    fds: [20, 20],
    csi: [1, 1],
    threads: [8, 8],
    cpuS: [0, 1.5],
    nodejs_heap: [NaN, 5],
  });
  const upstream = seriesColumns([sample(0, 60, { go_goroutines: 268 })]);
  const csv = seriesCsv({ "ours run 1": ours, "upstream run 1": upstream });
  strictEqual(
    csv,
    [
      "series,t,rssMiB,rssAnonMiB,rssFileMiB,fds,csi,threads,cpuS,nodejs_heap,go_goroutines",
      '"ours run 1",0,80,30,50,20,1,8,0,,',
      '"ours run 1",15,81.3,31.3,50,20,1,8,1.5,5,',
      '"upstream run 1",0,60,10,50,20,1,8,0,,268',
      "",
    ].join("\n"),
  );
});
