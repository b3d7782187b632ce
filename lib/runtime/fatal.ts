/** An error that ends the process: the agent is crash-only where repair is not worth it. */
export class FatalError extends Error {
  /** Process exit code: 1 for runtime failures (2 is reserved for bad configuration). */
  readonly exitCode: number;

  constructor(message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "FatalError";
    this.exitCode = options.exitCode ?? 1;
  }
}
