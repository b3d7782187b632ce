/**
 * The platforms the agent is built for. Bun fetches the runtime of a
 * `--target` other than its own from the npm registry (the package
 * @oven/bun-<target>) and keeps it in ~/.bun/install/cache, so both build on
 * any machine that reaches the registry `npm install` used.
 */

import { EM_AARCH64, EM_X86_64 } from "./elf.ts";

export interface Platform {
  /** OCI architecture. */
  arch: "amd64" | "arm64";
  variant?: string;
  /** `bun build --compile --target`. */
  bunTarget: string;
  elfMachine: number;
  /** The dynamic loader Bun's runtime for the platform names (PT_INTERP). */
  interpreter: string;
  /** Debian's multiarch directory name: the image keeps the libraries in /lib/<triplet>. */
  triplet: string;
  /** qemu-user's emulator, to run the binary on another machine. */
  qemu: string;
  /** Where Debian's cross C library for this platform lives. */
  crossSysroot: string;
  /** Its Debian package. */
  crossLibcPackage: string;
}

/**
 * x64 is built for Bun's baseline target (Nehalem: no AVX, AVX2 or AVX-512
 * needed), so the binary runs on every x86-64 CPU a node may have. With Bun
 * 1.4.5 the npm packages @oven/bun-linux-x64 and @oven/bun-linux-x64-baseline
 * hold the same runtime (same sha256), so nothing is given up for it; naming
 * the baseline keeps it so if the default runtime starts requiring AVX2.
 */
export const LINUX_X64: Platform = {
  arch: "amd64",
  bunTarget: "bun-linux-x64-baseline",
  elfMachine: EM_X86_64,
  interpreter: "/lib64/ld-linux-x86-64.so.2",
  triplet: "x86_64-linux-gnu",
  qemu: "qemu-x86_64",
  crossSysroot: "/usr/x86_64-linux-gnu",
  crossLibcPackage: "libc6-amd64-cross",
};

export const LINUX_ARM64: Platform = {
  arch: "arm64",
  variant: "v8",
  bunTarget: "bun-linux-arm64",
  elfMachine: EM_AARCH64,
  interpreter: "/lib/ld-linux-aarch64.so.1",
  triplet: "aarch64-linux-gnu",
  qemu: "qemu-aarch64",
  crossSysroot: "/usr/aarch64-linux-gnu",
  crossLibcPackage: "libc6-arm64-cross",
};

export const PLATFORMS: readonly Platform[] = [LINUX_X64, LINUX_ARM64];

export function platformOfMachine(machine: number): Platform {
  const platform = PLATFORMS.find((candidate) => candidate.elfMachine === machine);
  if (platform === undefined) throw new Error(`no platform for ELF machine ${machine}`);
  return platform;
}

/** The platform this process runs on. */
export function hostPlatform(arch: string = Deno.build.arch): Platform {
  return arch === "aarch64" ? LINUX_ARM64 : LINUX_X64;
}

/**
 * The compiled binary, relative to the repository root: the host platform's
 * is dist/csi-node-provisioner (what the tests, the demo and the benchmarks
 * run), another platform's has the platform in its name.
 */
export function binaryPath(platform: Platform, host: Platform = hostPlatform()): string {
  return platform === host
    ? "dist/csi-node-provisioner"
    : `dist/csi-node-provisioner-linux-${platform.arch}`;
}
