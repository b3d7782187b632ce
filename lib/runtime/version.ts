/** The agent's version, taken from package.json at build time (embedded in the binary). */
import manifest from "../../package.json" with { type: "json" };
import { runtimeName } from "./platform.ts";

/** Semantic version of this build. */
export const VERSION: string = manifest.version;

/**
 * `bun build --define` replaces this name with the commit's hash
 * (deploy/image/compile.ts); from source it is not defined at all, and
 * typeof of an undefined name is "undefined", not an error.
 */
declare const CSI_NODE_PROVISIONER_COMMIT: string | undefined;

/** The git commit the binary was compiled from; undefined when running from source. */
export const COMMIT: string | undefined = typeof CSI_NODE_PROVISIONER_COMMIT === "string"
  ? CSI_NODE_PROVISIONER_COMMIT
  : undefined;

/** What --version prints after the program's name. */
export function versionText(commit: string | undefined = COMMIT): string {
  if (commit !== undefined) return `${VERSION} (commit ${commit})`;
  const runtime = runtimeName() === "deno" ? "Deno" : runtimeName() === "bun" ? "Bun" : "a runtime";
  return `${VERSION} (running from source under ${runtime}: no commit compiled in)`;
}
