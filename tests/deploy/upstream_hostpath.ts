/**
 * Upstream csi-driver-host-path v1.18.0's distributed DaemonSet manifest
 * (deploy/kubernetes-distributed/hostpath/csi-hostpath-plugin.yaml, the
 * node plugin with the csi-provisioner sidecar in node mode), read from the
 * pinned archive in ../shared/peers (peers.ts checks its sha256): how
 * operators deploy a node-local driver with upstream's sidecar.
 */
import { HOSTPATH_DEPLOY_ARCHIVE, peersDir, verifiedArchive } from "../cluster/peers.ts";
import { run } from "./render.ts";

const DAEMONSET_MEMBER =
  "csi-driver-host-path-v1.18.0/deploy/kubernetes-distributed/hostpath/csi-hostpath-plugin.yaml";

/** The text of upstream's csi-hostpath-plugin.yaml, exactly as published. */
export async function upstreamHostpathDaemonSet(): Promise<string> {
  const archive = await verifiedArchive(peersDir(Deno.env.toObject()), HOSTPATH_DEPLOY_ARCHIVE);
  return await run("tar", ["-xzOf", archive, DAEMONSET_MEMBER]);
}
