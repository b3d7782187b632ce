/** Running the tools the image build needs (git, buildah, apt-get): output or a clear error. */

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Show the tool's own output instead of capturing it. */
  inherit?: boolean;
}

/** Runs the command; resolves to its standard output, or throws with its standard error. */
export async function runCommand(
  command: string,
  args: string[],
  options: RunOptions = {},
): Promise<string> {
  const output = await new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: options.inherit ? "inherit" : "piped",
    stderr: options.inherit ? "inherit" : "piped",
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
  }).output().catch((error: Error) => {
    throw new Error(`cannot run ${command}: ${error.message}`);
  });
  const decoder = new TextDecoder();
  if (!output.success) {
    const stderr = options.inherit ? "" : decoder.decode(output.stderr).trim();
    throw new Error(`${command} ${args.join(" ")} failed (exit ${output.code})\n${stderr}`);
  }
  return options.inherit ? "" : decoder.decode(output.stdout);
}

/** Whether an executable of that name is on PATH. */
export function onPath(name: string, path = Deno.env.get("PATH") ?? ""): boolean {
  return path.split(":").filter(Boolean).some((dir) => {
    try {
      const info = Deno.statSync(`${dir}/${name}`);
      return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
    } catch {
      return false;
    }
  });
}
