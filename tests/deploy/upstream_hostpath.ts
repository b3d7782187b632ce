/**
 * Upstream csi-driver-host-path v1.18.0's distributed DaemonSet manifest
 * (deploy/kubernetes-distributed/hostpath/csi-hostpath-plugin.yaml, the
 * node plugin with the csi-provisioner sidecar in node mode), read from the
 * source archive in ../shared/peers after checking the archive's pinned
 * sha256: how operators deploy a node-local driver with upstream's sidecar.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { run } from "./render.ts";

const ARCHIVE = {
  file: "csi-driver-host-path-v1.18.0-deploy-distributed.tar.gz",
  sha256: "82b8cec897c524627c2d34cab748c791227df19d5676f69b72d27bd4dbf58e0a",
  origin: "github.com/kubernetes-csi/csi-driver-host-path tag v1.18.0 " +
    "(commit cc78ee78ae23908c9e0607df2fe09c7ecfa52597), deploy/kubernetes-distributed",
};

const DAEMONSET_MEMBER =
  "csi-driver-host-path-v1.18.0/deploy/kubernetes-distributed/hostpath/csi-hostpath-plugin.yaml";

/** CSI_PEERS_DIR, else `../shared/peers` beside the repository's main checkout. */
async function peersDir(): Promise<string> {
  const fromEnv = Deno.env.get("CSI_PEERS_DIR");
  if (fromEnv) return fromEnv;
  // In a git worktree the main checkout is the one that holds the common .git directory.
  const common = (await run("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"]))
    .trim();
  const mainCheckout = common.endsWith("/.git") ? dirname(common) : REPO_ROOT;
  return join(dirname(mainCheckout), "shared", "peers");
}

/** The archive's path, after checking it is there and has the pinned sha256. */
async function verifiedArchive(): Promise<string> {
  const path = join(await peersDir(), ARCHIVE.file);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: it is ${ARCHIVE.origin}; set CSI_PEERS_DIR to its folder`);
  }
  const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
  if (sha256 !== ARCHIVE.sha256) {
    throw new Error(`${path} has sha256 ${sha256}, not the pinned ${ARCHIVE.sha256}`);
  }
  return path;
}

/** The text of upstream's csi-hostpath-plugin.yaml, exactly as published. */
export async function upstreamHostpathDaemonSet(): Promise<string> {
  return await run("tar", ["-xzOf", await verifiedArchive(), DAEMONSET_MEMBER]);
}
