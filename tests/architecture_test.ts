/**
 * The import rules of ARCHITECTURE.md, read from the import statements of
 * main.ts and every non-test file under lib/:
 *
 * 1. Arrows point down: each folder of lib/ has a layer, and every import
 *    goes to a lower one (so folders form no cycle, and provision/, delete/
 *    and capacity/ never import each other); no files import each other in
 *    a cycle, type imports included; nothing in lib/ imports main.ts,
 *    tests/ or bench/; every folder of lib/ has a layer.
 * 2. Decisions are pure: model/, topology/ and secrets/ import only pure
 *    modules, and are pure themselves (no npm package, no node: built-in,
 *    no lib/runtime/platform.ts, through any chain of value imports); so
 *    are the decisions of the paths (decide.ts, request.ts, plan.ts, ...).
 * 3. Only main.ts composes: the three paths import other folders' values
 *    only from pure modules (adapters reach them as ports, by type); an
 *    adapter folder (csi/, kube/, http/) imports no other adapter's values.
 *    The explain program (lib/explain/program.ts) is the one other root,
 *    of its own program: only main.ts imports it, to dispatch to it.
 *
 * The checker also runs on small made-up trees, one per rule, to show that
 * each rule fails when it is broken.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));

/** Layer of each folder of lib/; an import must go to a strictly lower layer. */
const LAYERS: Record<string, number> = {
  model: 0,
  config: 1,
  log: 1,
  queue: 2,
  runtime: 2,
  csi: 3,
  journal: 3,
  kube: 3,
  http: 4,
  secrets: 4,
  topology: 4,
  liveness: 4,
  capacity: 5,
  clone: 5,
  delete: 5,
  provision: 5,
  resize: 5,
  explain: 6,
};
const PURE_FOLDERS = ["model", "topology", "secrets"];
/** The decisions of the paths, which are pure as well. */
const DECISIONS = new Set([
  "lib/provision/decide.ts",
  "lib/provision/request/request.ts",
  "lib/provision/pv/persistent_volume.ts",
  "lib/provision/race/may_race.ts",
  "lib/provision/race/published_capacity.ts",
  "lib/delete/decide.ts",
  "lib/delete/lost/decide.ts",
  "lib/delete/lost/volumes.ts",
  "lib/delete/lost/missing.ts",
  "lib/capacity/plan/plan.ts",
  "lib/capacity/plan/desired.ts",
  "lib/capacity/withdraw/decide.ts",
  "lib/liveness/watchers.ts",
  "lib/clone/decide.ts",
  "lib/resize/decide.ts",
  "lib/resize/claim_status.ts",
  "lib/resize/request.ts",
]);
const PATHS = ["provision", "delete", "capacity", "clone", "resize"];
const ADAPTERS = ["csi", "journal", "kube", "http"];
/** The root of the `explain` program, which main.ts dispatches to. */
const EXPLAIN_ROOT = "lib/explain/program.ts";
/** The one module that touches the runtime's globals (Deno.*, Bun.*). */
const PLATFORM = "lib/runtime/platform.ts";

interface Import {
  /** A repository path ("lib/kube/rest/client.ts"), or the bare or node: specifier. */
  target: string;
  typeOnly: boolean;
  /** An npm package or a node: built-in. */
  external: boolean;
}

/** The imports of one source text (static, re-exports and dynamic). */
export function importsOf(file: string, source: string): Import[] {
  const found: Import[] = [];
  const statement = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([^;"]*?)\s*from\s*"([^"]+)"/g;
  for (const match of source.matchAll(statement)) {
    const names = match[2] ?? "";
    const allTypes = /^\{[^}]*\}$/.test(names.trim()) &&
      names.replace(/[{}]/g, "").split(",").map((name) => name.trim()).filter((name) => name)
        .every((name) => name.startsWith("type "));
    found.push(resolve(file, match[3]!, match[1] !== undefined || allTypes));
  }
  for (const match of source.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)) {
    found.push(resolve(file, (match[1] ?? match[2])!, false));
  }
  return found;
}

function resolve(file: string, specifier: string, typeOnly: boolean): Import {
  const external = !specifier.startsWith(".");
  const target = external ? specifier : normalize(join(dirname(file), specifier));
  return { target, typeOnly, external };
}

const folderOf = (path: string): string | undefined =>
  path.startsWith("lib/") ? path.split("/")[1] : undefined;

/** Every violation of the three rules in a tree of sources (path → text). */
export function violations(sources: Map<string, string>): string[] {
  const imports = new Map([...sources].map(([file, text]) => [file, importsOf(file, text)]));
  const problems: string[] = [];
  const impure = impureModules(imports);
  for (const [file, list] of imports) {
    const folder = folderOf(file);
    if (folder === undefined) continue;
    if (LAYERS[folder] === undefined) problems.push(`${file}: lib/${folder}/ has no layer`);
    for (const { target, typeOnly, external } of list) {
      const into = folderOf(target);
      if (/^(tests|bench)\/|^main\.ts$/.test(target)) {
        problems.push(
          `${file} imports ${target}: nothing in lib/ imports main.ts, tests/ or bench/`,
        );
      }
      if (target === EXPLAIN_ROOT) {
        problems.push(`${file} imports ${target}: only main.ts imports a composition root`);
      }
      if (into !== undefined && into !== folder && (LAYERS[into] ?? 99) >= (LAYERS[folder] ?? -1)) {
        problems.push(
          `${file} imports ${target}: ${folder}/ may not import ${into}/ (layer ${
            LAYERS[into]
          } is not below ${LAYERS[folder]})`,
        );
      }
      if (PURE_FOLDERS.includes(folder) && (impure.has(target) || external)) {
        problems.push(
          `${file} imports ${target}: ${folder}/ is pure and imports only pure modules`,
        );
      }
      if (PATHS.includes(folder) && into !== folder && !typeOnly && impure.has(target)) {
        problems.push(
          `${file} imports ${target}: only main.ts composes; take the adapter as a port`,
        );
      }
      if (
        ADAPTERS.includes(folder) && ADAPTERS.includes(into ?? "") && into !== folder && !typeOnly
      ) {
        problems.push(`${file} imports ${target}: an adapter does not build on another adapter`);
      }
    }
  }
  for (const file of imports.keys()) {
    if (DECISIONS.has(file) && impure.has(file)) problems.push(`${file}: a decision is pure`);
  }
  return [...problems, ...cycles(imports)];
}

/** Modules that reach an npm package, a node: built-in or the platform module through value imports. */
function impureModules(imports: Map<string, Import[]>): Set<string> {
  const impure = new Set<string>([PLATFORM]);
  for (let changed = true; changed;) {
    changed = false;
    for (const [file, list] of imports) {
      if (impure.has(file)) continue;
      const reaches = ({ target, typeOnly, external }: Import) =>
        !typeOnly && (external || impure.has(target));
      if (list.some(reaches)) {
        impure.add(file);
        changed = true;
      }
    }
  }
  return impure;
}

/** Cycles between folders of lib/ and between files (type imports included in both). */
function cycles(imports: Map<string, Import[]>): string[] {
  const folders = new Map<string, Set<string>>();
  const files = new Map<string, Set<string>>();
  for (const [file, list] of imports) {
    const from = folderOf(file);
    for (const { target, external } of list) {
      if (external) continue;
      files.set(file, (files.get(file) ?? new Set()).add(target));
      const to = folderOf(target);
      if (from !== undefined && to !== undefined && to !== from) {
        folders.set(from, (folders.get(from) ?? new Set()).add(to));
      }
    }
  }
  return [
    ...cyclesOf(folders).map((cycle) => `folders form a cycle: ${cycle.join(" → ")}`),
    ...cyclesOf(files).map((cycle) => `files form a cycle: ${cycle.join(" → ")}`),
  ];
}

/** A cycle for each edge back to a node still open in a depth-first search. */
function cyclesOf(edges: Map<string, Set<string>>): string[][] {
  const open = new Set<string>();
  const done = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string, stack: string[]) => {
    open.add(node);
    stack.push(node);
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      if (open.has(next)) found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!done.has(next)) visit(next, stack);
    }
    stack.pop();
    open.delete(node);
    done.add(node);
  };
  for (const node of [...edges.keys()].sort()) if (!done.has(node)) visit(node, []);
  return found;
}

async function readTree(): Promise<Map<string, string>> {
  const sources = new Map<string, string>();
  sources.set("main.ts", await Deno.readTextFile(join(ROOT, "main.ts")));
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts") && !path.endsWith("_test.ts")) {
        sources.set(path, await Deno.readTextFile(join(ROOT, path)));
      }
    }
  };
  await walk("lib");
  return sources;
}

Deno.test("lib/ and main.ts follow the three import rules of ARCHITECTURE.md", async () => {
  const tree = await readTree();
  ok(tree.size > 100, `read ${tree.size} files from ${relative(Deno.cwd(), ROOT) || "."}`);
  deepStrictEqual(violations(tree), []);
});

/** A small tree that keeps every rule; each test below breaks one. */
function cleanTree(): Map<string, string> {
  return new Map([
    [
      "main.ts",
      'import { KubeApi } from "./lib/kube/api.ts";\nimport { decide } from "./lib/provision/decide.ts";',
    ],
    ["lib/model/objects.ts", "export interface Claim { name: string }"],
    ["lib/runtime/platform.ts", "export const serve = () => Deno.serve(() => new Response());"],
    [
      "lib/kube/api.ts",
      'import type { Claim } from "../model/objects.ts";\nimport { serve } from "../runtime/platform.ts";',
    ],
    ["lib/topology/affinity.ts", 'import type { Claim } from "../model/objects.ts";'],
    ["lib/provision/ports.ts", 'import type { KubeApi } from "../kube/api.ts";'],
    ["lib/provision/decide.ts", 'import { affinity } from "../topology/affinity.ts";'],
    ["lib/provision/metrics.ts", 'import { Counter } from "prom-client";'],
  ]);
}

Deno.test("the checker accepts a tree that keeps the rules", () => {
  deepStrictEqual(violations(cleanTree()), []);
});

Deno.test("rule 1 fails: files of one folder that import each other in a cycle, types included", () => {
  const tree = cleanTree();
  tree.set("lib/provision/race/ownership_race.ts", 'import { report } from "./report.ts";');
  tree.set("lib/provision/race/report.ts", 'import type { Race } from "./ownership_race.ts";');
  deepStrictEqual(violations(tree), [
    "files form a cycle: lib/provision/race/ownership_race.ts → lib/provision/race/report.ts → lib/provision/race/ownership_race.ts",
  ]);
});

Deno.test("rule 1 fails: a sub-folder is in its parent's layer, and imports up from there", () => {
  const tree = cleanTree();
  tree.set(
    "lib/provision/race/turn.ts",
    'import type { Plan } from "../../capacity/plan/plan.ts";',
  );
  tree.set("lib/provision/pv/persistent_volume.ts", 'import { load } from "js-yaml";');
  deepStrictEqual(violations(tree), [
    "lib/provision/race/turn.ts imports lib/capacity/plan/plan.ts: provision/ may not import capacity/ (layer 5 is not below 5)",
    "lib/provision/pv/persistent_volume.ts: a decision is pure",
  ]);
});

Deno.test("rule 1 fails: an import up a layer, a path importing another path, a cycle, lib/ importing tests/ or a root", () => {
  const tree = cleanTree();
  tree.set("lib/model/objects.ts", 'import type { KubeApi } from "../kube/api.ts";');
  tree.set(
    "lib/capacity/publish/publisher.ts",
    'import type { Refresh } from "../../provision/ports.ts";',
  );
  tree.set("lib/queue/clock.ts", 'import { FakeClock } from "../../tests/fakes/clock.ts";');
  tree.set("lib/cache/x.ts", "export {};");
  tree.set("lib/explain/run.ts", 'import { explainProgram } from "./program.ts";');
  const found = violations(tree);
  ok(
    found.some((v) =>
      v.startsWith("lib/model/objects.ts imports lib/kube/api.ts: model/ may not import kube/")
    ),
    found.join("\n"),
  );
  ok(
    found.some((v) =>
      v.startsWith(
        "lib/capacity/publish/publisher.ts imports lib/provision/ports.ts: capacity/ may not import provision/",
      )
    ),
  );
  ok(found.some((v) => v === "folders form a cycle: kube → model → kube"), found.join("\n"));
  ok(
    found.some((v) =>
      v.startsWith("lib/queue/clock.ts imports tests/fakes/clock.ts: nothing in lib/")
    ),
  );
  ok(found.some((v) => v === "lib/cache/x.ts: lib/cache/ has no layer"));
  ok(
    found.includes(
      "lib/explain/run.ts imports lib/explain/program.ts: only main.ts imports a composition root",
    ),
    found.join("\n"),
  );
});

Deno.test("rule 2 fails: a pure folder that imports an npm package or an adapter, an impure decision", () => {
  const tree = cleanTree();
  tree.set("lib/topology/affinity.ts", 'import { load } from "js-yaml";');
  tree.set("lib/secrets/template.ts", 'import { KubeApi } from "../kube/api.ts";');
  tree.set("lib/provision/decide.ts", 'import { readFileSync } from "node:fs";');
  const found = violations(tree);
  ok(found.includes("lib/provision/decide.ts: a decision is pure"), found.join("\n"));
  ok(
    found.includes(
      "lib/topology/affinity.ts imports js-yaml: topology/ is pure and imports only pure modules",
    ),
    found.join("\n"),
  );
  ok(
    found.includes(
      "lib/secrets/template.ts imports lib/kube/api.ts: secrets/ is pure and imports only pure modules",
    ),
  );
});

Deno.test("rule 3 fails: a path that builds an adapter itself, an adapter built on another", () => {
  const tree = cleanTree();
  tree.set("lib/provision/start.ts", 'import { KubeApi } from "../kube/api.ts";');
  tree.set("lib/http/serve.ts", 'import { KubeApi } from "../kube/api.ts";');
  const found = violations(tree);
  ok(
    found.includes(
      "lib/provision/start.ts imports lib/kube/api.ts: only main.ts composes; take the adapter as a port",
    ),
    found.join("\n"),
  );
  ok(
    found.includes(
      "lib/http/serve.ts imports lib/kube/api.ts: an adapter does not build on another adapter",
    ),
  );
});

Deno.test("importsOf() tells type-only imports, re-exports and dynamic imports apart", () => {
  const source = [
    'import type { A } from "./a.ts";',
    'import { type B, type C } from "../b.ts";',
    'import { D, type E } from "./d.ts";',
    'export { F } from "./f.ts";',
    'const yaml = await import("js-yaml");',
  ].join("\n");
  deepStrictEqual(importsOf("lib/kube/x.ts", source), [
    { target: "lib/kube/a.ts", typeOnly: true, external: false },
    { target: "lib/b.ts", typeOnly: true, external: false },
    { target: "lib/kube/d.ts", typeOnly: false, external: false },
    { target: "lib/kube/f.ts", typeOnly: false, external: false },
    { target: "js-yaml", typeOnly: false, external: true },
  ]);
});
