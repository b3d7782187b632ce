/**
 * Real drivers' node DaemonSets with upstream's csi-provisioner sidecar, as
 * their users install them, read from the pinned archive in ../shared/peers:
 * scylladb/local-csi-driver's manifest as shipped, and Azure/local-csi-driver's
 * and democratic-csi's charts rendered by `helm template` with the values
 * their READMEs give (democratic-csi's node mode is its local-hostpath
 * example). And the two ways an operator swaps the sidecar for this agent:
 * the kustomize component in an overlay, or the component's Helm
 * post-renderer.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { DRIVER_DAEMONSETS_ARCHIVE, extract, peersDir, verifiedArchive } from "../cluster/peers.ts";
import { DEPLOY_DIR, parseObjects, run } from "./render.ts";

export const COMPONENT_DIR: string = join(DEPLOY_DIR, "components", "replace-csi-provisioner");
export const POST_RENDERER: string = join(COMPONENT_DIR, "post-render.sh");
/** The port the component gives the agent (its agent.yaml). */
export function componentPort(): number {
  const [agent] = parseObjects(readFileSync(join(COMPONENT_DIR, "agent.yaml"), "utf8"));
  const spec = agent!.spec as { containers: { ports: { containerPort: number }[] }[] };
  return spec.containers[0]!.ports[0]!.containerPort;
}

/** The agent's image repository the tests ask for. */
export const IMAGE = "registry.example.com/csi-node-provisioner";

/** A driver as its users render it: a manifest file, or a chart with values. */
export interface DriverSource {
  name: string;
  namespace: string;
  /** The container running upstream's csi-provisioner. */
  container: string;
  /** A manifest under the archive, applied as shipped. */
  manifest?: string;
  /** A chart under the archive, with `helm template` arguments after the chart. */
  chart?: { path: string; release: string; args: string[] };
}

const DEMOCRATIC_CHART = "democratic-csi-chart/stable/democratic-csi";

export const DRIVERS: readonly DriverSource[] = [
  {
    name: "scylladb local-csi-driver",
    namespace: "local-csi-driver",
    container: "csi-provisioner",
    manifest: "scylladb-local-csi-driver/deploy/kubernetes/local-csi-driver/50_daemonset.yaml",
  },
  {
    // Its README: `helm install local-csi-driver ... --namespace kube-system`.
    name: "Azure local-csi-driver",
    namespace: "kube-system",
    container: "csi-provisioner",
    chart: { path: "azure-local-csi-driver/charts/latest", release: "local-csi-driver", args: [] },
  },
  {
    name: "democratic-csi",
    namespace: "democratic-csi",
    container: "external-provisioner",
    chart: {
      path: DEMOCRATIC_CHART,
      release: "local-hostpath",
      args: ["--values", `${DEMOCRATIC_CHART}/examples/local-hostpath.yaml`],
    },
  },
];

/** The archive, unpacked in a directory removed on dispose. */
export async function unpackDriverDaemonsets(): Promise<AsyncDisposable & { dir: string }> {
  const archive = await verifiedArchive(peersDir(Deno.env.toObject()), DRIVER_DAEMONSETS_ARCHIVE);
  const root = mkdtempSync(join(tmpdir(), "driver-daemonsets-"));
  await extract(archive, root);
  return {
    dir: join(root, DRIVER_DAEMONSETS_ARCHIVE.topDir),
    [Symbol.asyncDispose]: () => Promise.resolve(rmSync(root, { recursive: true, force: true })),
  };
}

function helmTemplateArgs(driver: DriverSource, dir: string): string[] {
  const chart = driver.chart!;
  return [
    "template",
    chart.release,
    join(dir, chart.path),
    `--namespace=${driver.namespace}`,
    ...chart.args.map((arg) => arg.startsWith("--") ? arg : join(dir, arg)),
  ];
}

/** The driver's manifests as its users apply them. */
export async function renderDriver(
  driver: DriverSource,
  options: { dir: string; helm: string },
): Promise<string> {
  if (driver.manifest) return readFileSync(join(options.dir, driver.manifest), "utf8");
  return await run(options.helm, helmTemplateArgs(driver, options.dir));
}

/** `helm template --post-renderer` with the component's post-render.sh. */
export async function renderWithPostRenderer(
  driver: DriverSource,
  options: { dir: string; helm: string; kubectl: string },
): Promise<string> {
  const env = { KUBECTL: options.kubectl, CSI_NODE_PROVISIONER_IMAGE: IMAGE };
  return await runWithEnv(options.helm, [
    ...helmTemplateArgs(driver, options.dir),
    `--post-renderer=${POST_RENDERER}`,
  ], env);
}

async function runWithEnv(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  const output = await new Deno.Command(command, { args, env, stdin: "null" }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  if (!output.success) throw new Error(`${command} ${args.join(" ")}: ${decode(output.stderr)}`);
  return decode(output.stdout);
}

/**
 * `kubectl kustomize` of an overlay with the component over a base holding
 * the manifests; a namespace is set in the base, where the component sees it.
 */
export async function renderWithComponent(
  kubectl: string,
  driverYaml: string,
  options: { namespace?: string } = {},
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "component-"));
  try {
    mkdirSync(join(dir, "driver"));
    mkdirSync(join(dir, "overlay"));
    writeFileSync(join(dir, "driver", "driver.yaml"), driverYaml);
    writeFileSync(
      join(dir, "driver", "kustomization.yaml"),
      `${
        options.namespace ? `namespace: ${options.namespace}\n` : ""
      }resources:\n  - driver.yaml\n`,
    );
    writeFileSync(
      join(dir, "overlay", "kustomization.yaml"),
      [
        "resources:",
        "  - ../driver",
        "components:",
        `  - ${relative(join(dir, "overlay"), COMPONENT_DIR)}`,
        "images:",
        "  - name: csi-node-provisioner",
        `    newName: ${IMAGE}`,
        "",
      ].join("\n"),
    );
    return await run(kubectl, ["kustomize", join(dir, "overlay")]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
