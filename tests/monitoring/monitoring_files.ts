/**
 * The PromQL of deploy/monitoring/: every dashboard panel's queries and
 * template variables, and every alert's expression.
 */

import { join } from "node:path";
import { DEPLOY_DIR, parseObjects } from "../deploy/render.ts";

export const MONITORING_DIR: string = join(DEPLOY_DIR, "monitoring");

export interface Query {
  /** Where it is: a panel's title and ref, a variable, or an alert. */
  where: string;
  /** PromQL (Grafana's variables still in it). */
  expr: string;
}

interface Panel {
  title: string;
  type: string;
  targets?: { refId: string; expr: string }[];
  panels?: Panel[];
}

export interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: string | { query: string } }[] };
}

export interface RuleGroup {
  name: string;
  rules: { alert?: string; record?: string; expr: string; for?: string; labels?: object }[];
}

export async function readDashboard(): Promise<Dashboard> {
  return JSON.parse(await Deno.readTextFile(join(MONITORING_DIR, "dashboard.json")));
}

export async function readRuleGroups(): Promise<RuleGroup[]> {
  const [rule] = parseObjects(
    await Deno.readTextFile(join(MONITORING_DIR, "prometheus-rule.yaml")),
  );
  return (rule!.spec as { groups: RuleGroup[] }).groups;
}

/** A query variable's `label_values(SELECTOR, label)`: the selector is PromQL. */
function variableExpression(query: string): string {
  return query.match(/^label_values\((.*),\s*\w+\)$/s)?.[1] ?? query;
}

export function dashboardQueries(dashboard: Dashboard): Query[] {
  const queries: Query[] = [];
  const visit = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        queries.push({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr });
      }
      visit(panel.panels ?? []);
    }
  };
  visit(dashboard.panels);
  for (const variable of dashboard.templating.list) {
    if (variable.type !== "query" || variable.query === undefined) continue;
    const query = typeof variable.query === "string" ? variable.query : variable.query.query;
    queries.push({ where: `variable $${variable.name}`, expr: variableExpression(query) });
  }
  return queries;
}

export function ruleQueries(groups: RuleGroup[]): Query[] {
  return groups.flatMap((group) =>
    group.rules.map((rule) => ({
      where: `${group.name}: ${rule.alert ?? rule.record}`,
      expr: rule.expr,
    }))
  );
}

/** Grafana's variables replaced by values Prometheus accepts, as Grafana sends the query. */
export function withGrafanaVariables(expr: string): string {
  return expr
    .replaceAll("$__rate_interval", "2m")
    .replaceAll("$__range", "6h")
    .replaceAll("$job", "csi-node-provisioner")
    .replaceAll("$node", ".*");
}
