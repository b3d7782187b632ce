/** The agent's version, taken from package.json at build time (embedded in the binary). */
import manifest from "../../package.json" with { type: "json" };

/** Semantic version of this build. */
export const VERSION: string = manifest.version;
