/**
 * The image's entrypoint run by itself, as the image's own user (65532)
 * with a read-only root: it starts (every library is there, at the path the
 * loader looks in) and reports the commit the image's labels name, and Bun's
 * allocator reads the image's environment. Without
 * one of its libraries it does not start: the chroot runs only what the
 * image holds, whatever this machine has.
 */

import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { IMAGE_ENV } from "../../deploy/image/image.ts";
import { hostPlatform } from "../../deploy/image/platforms.ts";
import { mountImage, testImage } from "./image_fixture.ts";
import { runEntrypoint } from "./image_agent.ts";

Deno.test("the image's entrypoint runs as the image's user and prints the labelled version and commit", async () => {
  const build = await testImage();
  await using image = await mountImage(build, hostPlatform());
  const run = await runEntrypoint(image, ["--version"]);
  strictEqual(run.code, 0, run.stderr);
  const labels = image.config.Labels;
  strictEqual(
    run.stdout,
    `csi-node-provisioner ${labels["org.opencontainers.image.version"]} ` +
      `(commit ${labels["org.opencontainers.image.revision"]})\n`,
  );
});

Deno.test("the image starts the agent with Bun's allocator sweeping its free blocks at most once a second", async () => {
  const build = await testImage();
  await using image = await mountImage(build, hostPlatform());
  // With MIMALLOC_VERBOSE the allocator prints every option as it read it at the process's start.
  const run = await runEntrypoint(image, ["--version"], { env: { MIMALLOC_VERBOSE: "1" } });
  strictEqual(run.code, 0, run.stderr);
  const line = (run.stdout + run.stderr).split("\n")
    .find((text) => text.startsWith("option 'purge_holes_min_interval':"));
  strictEqual(
    line?.trim(),
    `option 'purge_holes_min_interval': ${IMAGE_ENV.MIMALLOC_PURGE_HOLES_MIN_INTERVAL}`,
  );
});

Deno.test("without one of its libraries the image's entrypoint does not start", async () => {
  const build = await testImage();
  await using image = await mountImage(build, hostPlatform());
  // The working container is the image's copy: changing it leaves the image alone.
  const library = join(image.rootfs, "lib", hostPlatform().triplet, "libm.so.6");
  await Deno.remove(library);
  const run = await runEntrypoint(image, ["--version"]);
  ok(run.code !== 0, `exit ${run.code}`);
  ok(run.stderr.includes("libm.so.6: cannot open shared object file"), run.stderr);
});
