/**
 * The binary as a kubectl plugin. kubectl runs `kubectl-csi_node_provisioner`
 * from PATH for `kubectl csi-node-provisioner ...` (a dash of the command is
 * an underscore in the file's name); the release's files are named
 * `kubectl-csi_node_provisioner-<os>-<arch>`, so any name that starts with it
 * is the plugin. Called so, the binary is explain only: it never runs the agent.
 */

/** The plugin's file name on PATH. */
export const PLUGIN_FILE = "kubectl-csi_node_provisioner";

/** The command a user types, for usage and messages. */
export const PLUGIN_COMMAND = "kubectl csi-node-provisioner";

/** Whether the binary was called by the plugin's file name (the base name of argv[0]). */
export function isKubectlPlugin(invokedAs: string): boolean {
  return invokedAs.startsWith(PLUGIN_FILE);
}

/** The plugin's arguments as explain's: `explain` is the primary form, and may be left out. */
export function pluginExplainArgs(argv: readonly string[]): readonly string[] {
  return argv[0] === "explain" ? argv.slice(1) : argv;
}
