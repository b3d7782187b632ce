/**
 * The two requests of an informer: the list, in pages, trimming every object
 * on arrival, and one watch from a resourceVersion with bookmarks, whose
 * lines go to a handler that may end it; and the decoding of a watch line.
 */
import { objectKey } from "../../model/objects.ts";
import { GoneError, WatchEventError } from "./retry.ts";
import type { InformerOptions, ListPage, WatchEvent } from "./types.ts";
import { withoutManagedFields } from "../rest/managed_fields.ts";
import type { KubeRest, RetryAfterWait } from "../rest/client.ts";
import type { StreamEnd } from "../rest/types.ts";

const MIN_WATCH_TIMEOUT_S = 300;

/** What both requests need: the client, what to watch, and who hears of a Retry-After wait. */
export interface ListWatchTarget<T> {
  rest: KubeRest;
  options: InformerOptions<T>;
  onRetryAfter: (wait: RetryAfterWait) => void;
}

/** Every page of the list: the kept objects by key, and the list's resourceVersion. */
export async function listAll<T>(
  target: ListWatchTarget<T>,
  signal: AbortSignal,
): Promise<{ objects: Map<string, T>; resourceVersion: string }> {
  const { rest, options } = target;
  const objects = new Map<string, T>();
  let continueToken: string | undefined;
  let resourceVersion = "";
  do {
    const page = await rest.request<ListPage>({
      method: "GET",
      path: options.path,
      query: selectors(options, { limit: options.pageSize ?? 500, continue: continueToken }),
      signal,
      unmetered: continueToken !== undefined,
      withoutManagedFields: options.cutManagedFields === true,
      onRetryAfter: target.onRetryAfter,
    });
    for (const raw of page.items ?? []) {
      const object = options.trim(raw);
      if (object !== undefined) objects.set(objectKey(raw.metadata), object);
    }
    continueToken = page.metadata?.continue || undefined;
    resourceVersion = page.metadata?.resourceVersion ?? "";
  } while (continueToken !== undefined && !signal.aborted);
  return { objects, resourceVersion };
}

/**
 * One watch from `resourceVersion`, until it ends, breaks, goes idle
 * (`inactivityMs`) or `signal` aborts. `onLine` returns the error that must
 * end the watch, if any: it is thrown.
 */
export async function watchOnce<T>(target: ListWatchTarget<T>, watch: {
  resourceVersion: string;
  inactivityMs: number;
  signal: AbortSignal;
  onOpen: () => void;
  onLine: (line: string) => Error | undefined;
}): Promise<StreamEnd> {
  const { options } = target;
  const { signal } = watch;
  const random = options.random ?? Math.random;
  const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_S * (1 + random()));
  // Ends this one watch (not the informer) when an event says it must restart.
  const watchEnd = new AbortController();
  const stop = () => watchEnd.abort();
  signal.addEventListener("abort", stop, { once: true });
  let failure: Error | undefined;
  try {
    const end = await target.rest.stream({
      method: "GET",
      path: options.path,
      query: selectors(options, {
        watch: true,
        allowWatchBookmarks: true,
        resourceVersion: watch.resourceVersion,
        timeoutSeconds,
      }),
      onRetryAfter: target.onRetryAfter,
    }, {
      signal: watchEnd.signal,
      inactivityMs: watch.inactivityMs,
      onOpen: watch.onOpen,
      onLine: (line) => {
        if (failure !== undefined) return;
        failure = watch.onLine(line);
        if (failure !== undefined) watchEnd.abort();
      },
    });
    if (failure !== undefined) throw failure;
    return end;
  } catch (error) {
    // Aborting the request to end the watch surfaces as an error; the reason is `failure`.
    if (failure !== undefined) throw failure;
    if (signal.aborted) return "aborted";
    throw error;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/** A watch line as an event, or the error that must restart the watch (an ERROR event, not JSON). */
export function decodeWatchLine(line: string, cutManagedFields: boolean): WatchEvent | Error {
  let event: WatchEvent;
  try {
    // The trim functions drop managedFields; cut, they are never allocated.
    event = JSON.parse(cutManagedFields ? withoutManagedFields(line) : line) as WatchEvent;
  } catch {
    return new WatchEventError(`watch sent a line that is not JSON: ${line.slice(0, 200)}`);
  }
  if (event.type !== "ERROR") return event;
  if (event.object.code === 410) return new GoneError("watch expired");
  return new WatchEventError(
    `watch error: ${event.object.message ?? JSON.stringify(event.object)}`,
  );
}

function selectors<T>(
  options: InformerOptions<T>,
  query: Record<string, string | number | boolean | undefined>,
) {
  return { ...query, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
}
