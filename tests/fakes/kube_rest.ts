/** The one KubeRest of unit tests: no server, scripted answers, every request recorded. */
import type {
  KubeRequest,
  KubeRest,
  StreamEnd,
  StreamOptions,
} from "../../lib/kube/rest/client.ts";

/** What the fake does beyond its list of answers. */
export interface RestScript {
  /**
   * The answer to a request once the list is used up (default: undefined);
   * it may wait, throw, or return an Error, which is thrown.
   */
  otherwise?: (request: KubeRequest) => unknown;
  /** Serves a watch; by default a watch is refused. */
  watch?: KubeRest["stream"];
}

/**
 * Records requests and answers each with the next of `answers` (an Error
 * is thrown), then as `script.otherwise` says.
 */
export function recordingRest(
  answers: unknown[] = [],
  script: RestScript = {},
): KubeRest & { requests: KubeRequest[] } {
  const requests: KubeRequest[] = [];
  return {
    requests,
    async request<T>(request: KubeRequest): Promise<T> {
      requests.push(request);
      const answer = answers.length > 0 ? answers.shift() : await script.otherwise?.(request);
      if (answer instanceof Error) throw answer;
      return answer as T;
    },
    stream: script.watch ?? (() => Promise.reject(new Error("no watch"))),
    close: () => {},
  };
}

/** Opens a watch that sends nothing; it ends when its signal aborts. */
export function silentWatch(options: StreamOptions): Promise<StreamEnd> {
  options.onOpen?.();
  return new Promise((resolve) =>
    options.signal.addEventListener("abort", () => resolve("aborted"), { once: true })
  );
}

/** One watch of a script: lines through options.onLine, then how it ended (default "end"). */
export type WatchScript = (
  options: StreamOptions,
  request: KubeRequest,
) => Promise<StreamEnd | void>;

/**
 * Serves each watch with the next of `scripts`, then silent watches; records
 * every watch request and the idle bound it was handed.
 */
export function scriptedWatches(scripts: WatchScript[] = []): {
  watch: KubeRest["stream"];
  requests: KubeRequest[];
  inactivityMs: number[];
} {
  const requests: KubeRequest[] = [];
  const inactivityMs: number[] = [];
  const watch: KubeRest["stream"] = (request, options) => {
    requests.push(request);
    inactivityMs.push(options.inactivityMs);
    const next = scripts.shift();
    if (next === undefined) return silentWatch(options);
    options.onOpen?.();
    return next(options, request).then((end) => end ?? "end");
  };
  return { watch, requests, inactivityMs };
}
