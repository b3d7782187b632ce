/** `--help` and docs/flags.md's flag table, both generated from the flag table. */
import type { FlagSection, FlagSpec } from "./flags.ts";

const SECTION_TITLES: Record<FlagSection, string> = {
  provisioner: "Provisioner flags",
  sidecar: "Shared CSI sidecar flags",
  logging: "Logging flags",
};

const SECTIONS: FlagSection[] = ["provisioner", "sidecar", "logging"];

function placeholder(spec: FlagSpec): string {
  switch (spec.type) {
    case "bool":
      return "";
    case "duration":
      return " duration";
    case "featureGates":
      return " key=bool,...";
    case "labels":
      return " key:value,...";
    default:
      return ` ${spec.type}`;
  }
}

function defaultText(spec: FlagSpec): string {
  if (spec.default === "" || (spec.type === "bool" && spec.default === "false")) return "";
  return ` (default ${spec.type === "string" ? JSON.stringify(spec.default) : spec.default})`;
}

/** The text printed by `--help`. */
export function renderHelp(specs: readonly FlagSpec[], program: string): string {
  const lines = [
    `Usage: ${program} --node-deployment --csi-address=PATH [flags]`,
    "",
    "A per-node CSI provisioner agent, a drop-in for external-provisioner --node-deployment.",
    "Environment: NODE_NAME (required), NAMESPACE and POD_NAME (with --enable-capacity; POD_NAME not with --capacity-owner-node), KUBECONFIG.",
    "Flags take Go syntax: -flag, --flag, --flag=value, --flag value (not for booleans).",
    `Why is a claim Pending? ${program} explain [-n NAMESPACE] CLAIM (see ${program} explain --help).`,
  ];
  for (const section of SECTIONS) {
    lines.push("", `${SECTION_TITLES[section]}:`);
    for (const spec of specs.filter((candidate) => candidate.section === section)) {
      lines.push(`  --${spec.name}${placeholder(spec)}`);
      lines.push(`        ${spec.usage}${defaultText(spec)}`);
    }
  }
  return lines.join("\n") + "\n";
}

function escapeCell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** A Markdown table of every flag, for docs/flags.md. */
export function renderFlagTable(specs: readonly FlagSpec[]): string {
  const lines = ["| Flag | Default | Meaning |", "|---|---|---|"];
  for (const spec of specs) {
    const def = spec.default === "" ? "" : `\`${spec.default}\``;
    lines.push(`| \`--${spec.name}\` | ${def} | ${escapeCell(spec.usage)} |`);
  }
  return lines.join("\n") + "\n";
}

/** The one start-up message that lists every problem with the flags and environment (exit code 2). */
export function problemsText(program: string, problems: readonly string[]): string {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = problems.map((problem) => `  - ${problem}\n`).join("");
  return `${program}: cannot start, ${count}:\n${lines}Run ${program} --help for every flag.\n`;
}
