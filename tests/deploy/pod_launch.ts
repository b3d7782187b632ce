/**
 * A rendered container's command line and environment as the kubelet would
 * start it in the DaemonSet's pod on a node, for a test that runs the
 * process itself beside a tests/cluster driver: the downward-API variables
 * resolved for that pod, and the CSI socket's path, which is the one path of
 * the args that differs on a test machine, replaced.
 */

/** The pod fields a container's env may read through the downward API. */
export interface PodFields {
  nodeName: string;
  namespace: string;
  podName: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

const FIELDS: Record<string, keyof PodFields> = {
  "spec.nodeName": "nodeName",
  "metadata.namespace": "namespace",
  "metadata.name": "podName",
};

/**
 * The variables as the kubelet sets them. A source it cannot resolve here
 * (a Secret, a ConfigMap, another field) throws, naming the variable: a
 * chart that starts using one must be looked at, not half-run.
 */
export function resolveEnv(
  env: readonly EnvVar[] | undefined,
  pod: PodFields,
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const variable of env ?? []) {
    if (variable.valueFrom === undefined) {
      resolved[variable.name] = variable.value ?? "";
      continue;
    }
    const field = FIELDS[variable.valueFrom.fieldRef?.fieldPath ?? ""];
    if (field === undefined) {
      throw new Error(
        `env ${variable.name}: only fieldRef ${Object.keys(FIELDS).join(", ")} can be resolved ` +
          `here, not ${JSON.stringify(variable.valueFrom)}`,
      );
    }
    resolved[variable.name] = pod[field];
  }
  return resolved;
}

const CSI_ADDRESS = /^(-{1,2}csi-address=)(.*)$/;

/** The args with the value of their one `--csi-address=` replaced; throws unless there is exactly one. */
export function withCsiAddress(args: readonly string[], address: string): string[] {
  const found = args.filter((arg) => CSI_ADDRESS.test(arg));
  if (found.length !== 1 || args.includes("--csi-address") || args.includes("-csi-address")) {
    throw new Error(`expected one --csi-address=VALUE in ${JSON.stringify(args)}`);
  }
  return args.map((arg) => arg.replace(CSI_ADDRESS, (_all, flag) => `${flag}${address}`));
}
