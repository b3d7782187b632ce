/** Reading an OCI archive's index, manifests and configurations (tar, no unpacking to disk). */

import { runCommand } from "./command.ts";

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string; variant?: string };
}

export interface ArchiveImage {
  architecture: string;
  /** The compressed layers, as a registry stores and a node pulls them. */
  layers: Descriptor[];
  config: { created: string; config: { Labels?: Record<string, string> } };
}

async function readEntry(archive: string, path: string): Promise<string> {
  return await runCommand("tar", ["-xOf", archive, path]);
}

function blobPath(digest: string): string {
  return `blobs/${digest.replace(":", "/")}`;
}

/** Every image the archive's index (or nested index) names. */
export async function archiveImages(archive: string): Promise<ArchiveImage[]> {
  const images: ArchiveImage[] = [];
  const visit = async (descriptors: Descriptor[]) => {
    for (const descriptor of descriptors) {
      const body = JSON.parse(await readEntry(archive, blobPath(descriptor.digest)));
      if (body.manifests) {
        await visit(body.manifests);
        continue;
      }
      const config = JSON.parse(await readEntry(archive, blobPath(body.config.digest)));
      images.push({ architecture: config.architecture, layers: body.layers, config });
    }
  };
  await visit(JSON.parse(await readEntry(archive, "index.json")).manifests);
  return images;
}
