/**
 * The manifests of deploy/ as objects: the kustomize base rendered by
 * `kubectl kustomize` and the Helm chart by `helm template`, plus the "why"
 * comment of each RBAC rule in deploy/rbac.yaml. Shared by the manifest
 * tests, the RBAC end-to-end test and the demo.
 */

import { loadAllYaml } from "@kubernetes/client-node";
import { join } from "node:path";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { runCommand } from "../cluster/process.ts";

export const DEPLOY_DIR: string = join(REPO_ROOT, "deploy");
export const CHART_DIR: string = join(DEPLOY_DIR, "helm", "csi-node-provisioner");
/** The example overlay: deploy/ with the upstream hostpath plugin, its CSIDriver and classes. */
export const EXAMPLE_DIR: string = join(REPO_ROOT, "examples", "hostpath");
export const RBAC_FILE: string = join(DEPLOY_DIR, "rbac.yaml");
/** The marker of a rule that is not used by every agent: the comment names the case. */
export const CONDITIONAL_MARKER = "Needed only";

/** A rendered Kubernetes object (only what the tests read is typed). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Runs a command in the repository; resolves to stdout, throws with stderr when it fails. */
export function run(
  command: string,
  args: string[],
  options: { stdin?: string } = {},
): Promise<string> {
  return runCommand(command, args, { ...options, cwd: REPO_ROOT });
}

/**
 * Plain objects: client-node's parser makes class instances, which
 * deepStrictEqual tells apart. Documents with only comments (helm renders
 * them for disabled templates) are skipped: that parser fails on them.
 */
export function parseObjects(yaml: string): K8sObject[] {
  const documents = yaml.split(/^---.*$/m)
    .filter((document) => document.replace(/^\s*#.*$/gm, "").trim() !== "");
  const typed = (documents.flatMap((document) => loadAllYaml(document)) as (K8sObject | null)[])
    .filter((object) => object !== null);
  return JSON.parse(JSON.stringify(typed)) as K8sObject[];
}

/** `kubectl kustomize deploy` (or another kustomization): the text and its objects. */
export async function renderKustomize(
  kubectl: string,
  dir: string = DEPLOY_DIR,
): Promise<{ yaml: string; objects: K8sObject[] }> {
  const yaml = await run(kubectl, ["kustomize", dir]);
  return { yaml, objects: parseObjects(yaml) };
}

/** `helm template` of the chart with `--set` values. */
export async function renderHelm(
  helm: string,
  options: { release?: string; namespace?: string; set?: string[]; kubeVersion?: string } = {},
): Promise<{ yaml: string; objects: K8sObject[] }> {
  const yaml = await run(helm, [
    "template",
    options.release ?? "csi-node-provisioner",
    CHART_DIR,
    `--namespace=${options.namespace ?? "csi-node-provisioner"}`,
    ...(options.kubeVersion ? [`--kube-version=${options.kubeVersion}`] : []),
    ...(options.set ?? []).flatMap((value) => ["--set", value]),
  ]);
  return { yaml, objects: parseObjects(yaml) };
}

/** The one object of that kind (and name, when given); throws when there is not exactly one. */
export function theObject(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((object) =>
    object.kind === kind && (name === undefined || object.metadata.name === name)
  );
  if (found.length !== 1) {
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ""}, found ${found.length}`);
  }
  return found[0]!;
}

export function rulesOf(role: K8sObject): PolicyRule[] {
  return (role.rules as PolicyRule[] | undefined) ?? [];
}

/** The agent container of a rendered DaemonSet. */
export type Container = Record<string, unknown> & {
  name: string;
  args: string[];
  env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
};

export function agentContainer(daemonSet: K8sObject): Container {
  const spec = daemonSet.spec as {
    template: { spec: { containers: Container[] } };
  };
  const container = spec.template.spec.containers.find((c) => c.name === "csi-node-provisioner");
  if (!container) throw new Error(`DaemonSet ${daemonSet.metadata.name} has no agent container`);
  return container;
}

/** A granted rule with the comment lines right above it in deploy/rbac.yaml. */
export interface CommentedRule extends PolicyRule {
  role: "ClusterRole" | "Role";
  comment: string;
  conditional: boolean;
}

/**
 * The rules of the ClusterRole and Role in rbac.yaml's text, each with its
 * comment. Rules are found in the text by their `- apiGroups:` lines, which
 * match the parsed rules one to one (a commented-out rule is only comment).
 */
export function commentedRules(rbacYaml: string): CommentedRule[] {
  const result: CommentedRule[] = [];
  for (const documentText of rbacYaml.split(/^---$/m)) {
    const [object] = parseObjects(documentText);
    if (object?.kind !== "ClusterRole" && object?.kind !== "Role") continue;
    const comments = ruleComments(documentText);
    const rules = rulesOf(object);
    if (comments.length !== rules.length) {
      throw new Error(`${object.kind}: ${rules.length} rules but ${comments.length} rule lines`);
    }
    rules.forEach((rule, index) => {
      const comment = comments[index] ?? "";
      result.push({
        ...rule,
        role: object.kind as "ClusterRole" | "Role",
        comment,
        conditional: comment.includes(CONDITIONAL_MARKER),
      });
    });
  }
  return result;
}

/** For each `- apiGroups:` line, the comment block directly above it. */
function ruleComments(documentText: string): string[] {
  const comments: string[] = [];
  let block: string[] = [];
  for (const line of documentText.split("\n")) {
    if (/^\s*#/.test(line)) {
      block.push(line.replace(/^\s*#\s?/, ""));
    } else if (/^\s*- apiGroups:/.test(line)) {
      comments.push(block.join(" "));
      block = [];
    } else {
      block = [];
    }
  }
  return comments;
}
