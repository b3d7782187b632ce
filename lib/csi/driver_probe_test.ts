import { deepStrictEqual, strictEqual } from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import { capturing } from "../../tests/fakes/logger.ts";
import { waitFor } from "../../tests/cluster/wait.ts";
import { DriverProbe } from "./driver_probe.ts";
import { CsiError } from "./status.ts";

function fakeConnection(answer: () => Promise<{ ready: { value: boolean } | null }>) {
  let state = grpc.connectivityState.READY;
  const timeouts: (number | undefined)[] = [];
  return {
    connection: {
      target: "unix:///csi/csi.sock",
      state: () => state,
      call: ((_method: string, _request: unknown, options?: { timeoutMs?: number }) => {
        timeouts.push(options?.timeoutMs);
        return answer();
      }) as never,
    },
    setState: (next: grpc.connectivityState) => (state = next),
    timeouts,
  };
}

Deno.test("DriverProbe probes with its own deadline and says why the driver is not fit", async () => {
  let answer: () => Promise<{ ready: { value: boolean } | null }> = () =>
    Promise.resolve({ ready: null });
  const fake = fakeConnection(() => answer());
  const { logger, lines } = capturing(0);
  const gauge: boolean[] = [];
  const probe = new DriverProbe(fake.connection, {
    logger,
    onChange: (ready) => gauge.push(ready),
    intervalMs: 5,
    timeoutMs: 5000,
  });
  const stop = new AbortController();
  const running = probe.run(stop.signal);
  const until = (condition: () => boolean) =>
    waitFor(condition, {
      description: "the probe's next readiness",
      timeoutMs: 1000,
      intervalMs: 5,
    });
  await until(() => fake.timeouts.length >= 1);
  strictEqual(probe.readiness(), true);
  answer = () => Promise.reject(new CsiError("Probe", grpc.status.DEADLINE_EXCEEDED, "deadline"));
  await until(() => probe.readiness() !== true);
  strictEqual(probe.readiness(), "CSI driver did not answer Probe within 5 s");
  answer = () => Promise.resolve({ ready: { value: false } });
  await until(() => probe.readiness() === "CSI driver answers Probe with ready=false");
  answer = () => Promise.resolve({ ready: { value: true } });
  await until(() => probe.readiness() === true);
  fake.setState(grpc.connectivityState.TRANSIENT_FAILURE);
  strictEqual(probe.readiness(), "CSI connection to unix:///csi/csi.sock is TRANSIENT_FAILURE");
  stop.abort();
  await running;
  strictEqual(fake.timeouts[0], 5000, "every background Probe has the 5 s deadline");
  deepStrictEqual(gauge, [true, false, true]);
  deepStrictEqual(lines.map((line) => JSON.parse(line).msg), [
    "CSI driver is not healthy",
    "CSI driver answers Probe again",
  ]);
});
