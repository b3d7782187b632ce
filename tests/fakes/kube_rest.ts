/** A KubeRest for unit tests of lib/kube: records requests, answers each with the next answer. */
import type { KubeRequest, KubeRest } from "../../lib/kube/rest.ts";

/** Answers requests in order; an Error answer is thrown. */
export function recordingRest(answers: unknown[]): KubeRest & { requests: KubeRequest[] } {
  const requests: KubeRequest[] = [];
  return {
    requests,
    request<T>(request: KubeRequest): Promise<T> {
      requests.push(request);
      const answer = answers.shift();
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
    },
    stream: () => Promise.reject(new Error("no watch")),
    close: () => {},
  };
}
