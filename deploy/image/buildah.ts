/**
 * buildah with its own storage (vfs, in a directory the caller owns and
 * removes): no daemon, no root-wide state, no user namespace; it works in
 * the containers and VMs where CI runs.
 */

import { join } from "node:path";
import { runCommand } from "./command.ts";

export class Buildah {
  readonly storage: string;

  constructor(storage: string) {
    this.storage = storage;
  }

  async run(args: string[]): Promise<string> {
    return (await runCommand("buildah", [
      "--root",
      join(this.storage, "root"),
      "--runroot",
      join(this.storage, "run"),
      "--storage-driver",
      "vfs",
      ...args,
    ])).trim();
  }

  /** Removes every container and image, then the storage directory. */
  async remove(): Promise<void> {
    await this.run(["rm", "--all"]).catch(() => "");
    await this.run(["rmi", "--all", "--force"]).catch(() => "");
    await Deno.remove(this.storage, { recursive: true }).catch(() => {});
  }
}

/** A fresh storage directory under the system's temporary directory. */
export async function temporaryBuildah(): Promise<Buildah> {
  return new Buildah(await Deno.makeTempDir({ prefix: "csi-node-provisioner-buildah-" }));
}
