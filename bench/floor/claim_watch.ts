/**
 * The one watch of the floor programs (bench/floor.ts): PersistentVolumeClaims
 * of every namespace, through the agent's own REST client, held open with no
 * handling of its lines. Prints "ready" once, when the watch has opened.
 */
import { loadCredentials } from "../../lib/kube/rest/credentials.ts";
import { createKubeRest } from "../../lib/kube/rest/client.ts";

/** Opens the watch; resolves once it is started (the caller goes on idling). */
export async function holdClaimWatch(kubeconfig: string): Promise<void> {
  const credentials = await loadCredentials({ kubeconfig, master: "", env: {} });
  const rest = createKubeRest(credentials, {
    userAgent: "floor",
    budget: { qps: 5, burst: 10 },
  });
  const signal = new AbortController().signal;
  let opened = false;
  void rest.stream(
    {
      method: "GET",
      path: "/api/v1/persistentvolumeclaims",
      query: { watch: true, allowWatchBookmarks: true },
    },
    {
      signal,
      inactivityMs: 600_000,
      onLine: () => {},
      onOpen: () => {
        if (!opened) console.log("ready");
        opened = true;
      },
    },
  );
}
