/** The one KubeRest of unit tests: no server, scripted answers, every request recorded. */
import type { KubeRequest, KubeRest } from "../../lib/kube/rest/client.ts";

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
