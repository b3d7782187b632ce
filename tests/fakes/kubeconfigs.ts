/** Temporary kubeconfig files for the unit tests of kubeconfig loading. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Runs `body` with a fresh directory, removed afterwards. */
export function withDir(body: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "kubeconfigs-"));
    try {
      await body(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** A kubeconfig with one context, its cluster and a token user, all named by the context. */
export function kubeconfig(
  name: string,
  options: { current?: string; namespace?: string; server?: string } = {},
): string {
  return JSON.stringify({
    ...(options.current === undefined ? {} : { "current-context": options.current }),
    contexts: [{
      name,
      context: {
        cluster: name,
        user: name,
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      },
    }],
    clusters: [{ name, cluster: { server: options.server ?? `https://${name}:6443` } }],
    users: [{ name, user: { token: `token-of-${name}` } }],
  });
}
