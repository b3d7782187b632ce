/**
 * Plain HTTPS requests to kube-apiserver as one identity of the test
 * cluster, for what the typed clients do not cover: /metrics, non-resource
 * paths, a proxy's address, or any request sent as an agent's own identity.
 */

/** The bearer token of a kubeconfig this harness wrote (JSON, one user with a token). */
export async function kubeconfigToken(kubeconfigPath: string): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(kubeconfigPath));
  return config.users[0].user.token;
}

/** GETs of one identity, on one HTTP client until close(). */
export interface TokenFetch {
  get(server: string, path: string, options?: { timeoutMs?: number }): Promise<Response>;
  close(): void;
}

/** GETs as the token's identity over HTTP/1.1, verifying TLS with the cluster's CA, until close(). */
export function tokenFetch(caPem: string, token: string): TokenFetch {
  const client = Deno.createHttpClient({ caCerts: [caPem], http2: false });
  const get = (server: string, path: string, options: { timeoutMs?: number } = {}) =>
    fetch(`${server}${path}`, {
      client,
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    } as RequestInit);
  return { get, close: () => client.close() };
}
