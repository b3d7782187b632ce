/**
 * The Debian packages the image build and its tests use (buildah, qemu-user,
 * the arm64 C library), installed with apt-get when their command is missing.
 * Nothing is installed by hand: the image task and the tests call this, so a
 * clean machine gets them on first use, with one line saying so.
 */

import { basename, join } from "node:path";
import { onPath, runCommand } from "./command.ts";
import type { Platform } from "./platforms.ts";

export interface DebianTool {
  /** A command, or an absolute path, that the package provides. */
  provides: string;
  /** The Debian package. */
  package: string;
}

export const BUILDAH: DebianTool = { provides: "buildah", package: "buildah" };
/** chroot, capabilities and no_new_privs in one step (tests/image). */
export const CAPSH: DebianTool = { provides: "capsh", package: "libcap2-bin" };

/**
 * What running another platform's binary takes here: its qemu-user
 * emulator and Debian's cross C library for it (whose files are also that
 * platform's image's libraries).
 */
export function crossTools(platform: Platform): DebianTool[] {
  return [
    { provides: platform.qemu, package: "qemu-user" },
    {
      provides: join(platform.crossSysroot, "lib", basename(platform.interpreter)),
      package: platform.crossLibcPackage,
    },
  ];
}

function present(tool: DebianTool): boolean {
  if (tool.provides.startsWith("/")) {
    try {
      Deno.statSync(tool.provides);
      return true;
    } catch {
      return false;
    }
  }
  return onPath(tool.provides);
}

/** The packages of the tools that are missing. */
export function missingPackages(tools: DebianTool[], isPresent = present): string[] {
  return [...new Set(tools.filter((tool) => !isPresent(tool)).map((tool) => tool.package))];
}

/**
 * Installs the packages of the missing tools with apt-get (as root,
 * non-interactively). Resolves once every tool is there; throws with
 * apt-get's message otherwise.
 */
export async function ensureDebianTools(
  tools: DebianTool[],
  options: { log?: (line: string) => void; why: string },
): Promise<void> {
  const packages = missingPackages(tools);
  if (packages.length === 0) return;
  const log = options.log ?? ((line: string) => console.error(line));
  if (Deno.uid() !== 0) {
    throw new Error(
      `${options.why} needs the Debian packages ${packages.join(", ")}: ` +
        `run \`apt-get install ${packages.join(" ")}\` as root`,
    );
  }
  log(`${options.why}: installing the Debian packages ${packages.join(", ")} with apt-get`);
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  await runCommand("apt-get", ["update", "-qq"], { env });
  await runCommand(
    "apt-get",
    ["install", "-y", "-qq", "--no-install-recommends", ...packages],
    { env },
  );
  const still = missingPackages(tools);
  if (still.length > 0) throw new Error(`apt-get installed ${still.join(", ")} without its tools`);
}
