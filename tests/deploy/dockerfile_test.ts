/**
 * deploy/Dockerfile cannot be built here (no Docker), so it is checked
 * against `deno task image`, which is built and run here: its runtime stage
 * is FROM scratch with the files its build stage stages, the same labels,
 * user, environment and entrypoint; the files it copies (and its .dockerignore lets
 * through) are all that main.ts and the staging script need; and replaying
 * its build stage on exactly those files stages the very files the image
 * holds, byte for byte.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { imageLabels, readBuildInfo } from "../../deploy/image/build_info.ts";
import { ENTRYPOINT, IMAGE_ENV, IMAGE_USER } from "../../deploy/image/image.ts";
import { hostPlatform } from "../../deploy/image/platforms.ts";
import { REPO_ROOT } from "../cluster/drivers.ts";
import { mountImage, testImage } from "../image/image_fixture.ts";
import { DEPLOY_DIR, run } from "./render.ts";

interface Instruction {
  stage: number;
  keyword: string;
  args: string;
}

/** Instructions with continuation lines joined and comments dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const joined = text.split("\n").filter((line) => !/^\s*#/.test(line)).join("\n")
    .replace(/\\\n/g, " ");
  let stage = -1;
  const instructions: Instruction[] = [];
  for (const line of joined.split("\n")) {
    const match = line.trim().match(/^([A-Z]+)\s+(.*)$/);
    if (!match) continue;
    const [, keyword, args] = match as unknown as [string, string, string];
    if (keyword === "FROM") stage++;
    instructions.push({ stage, keyword, args: args.replace(/\s+/g, " ").trim() });
  }
  return instructions;
}

/** `KEY="value with spaces" OTHER=x` → entries (LABEL's and ARG's syntax). */
export function parseAssignments(text: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const match of text.matchAll(/([\w.-]+)=(?:"([^"]*)"|(\S*))/g)) {
    entries[match[1]!] = match[2] ?? match[3] ?? "";
  }
  return entries;
}

const DOCKERFILE = join(DEPLOY_DIR, "Dockerfile");
const STAGING_SCRIPT = "deploy/image/rootfs.ts";

async function instructions(): Promise<Instruction[]> {
  return parseDockerfile(await Deno.readTextFile(DOCKERFILE));
}

function only(all: Instruction[], stage: number, keyword: string): string {
  const found = all.filter((i) => i.stage === stage && i.keyword === keyword);
  strictEqual(found.length, 1, `one ${keyword} in stage ${stage}`);
  return found[0]!.args;
}

/** COPY sources of the build stage (relative to the repository root). */
function copiedSources(all: Instruction[]): string[] {
  return all.filter((i) => i.stage === 0 && i.keyword === "COPY").flatMap((i) =>
    i.args.split(" ").slice(0, -1)
  );
}

function isCopied(path: string, sources: string[]): boolean {
  return sources.some((source) => source.endsWith("/") ? path.startsWith(source) : path === source);
}

/** Local files of a module's graph, relative to the repository root. */
async function moduleGraphFiles(entry: string): Promise<string[]> {
  const info = JSON.parse(
    await run(join(REPO_ROOT, "node_modules/.bin/deno"), ["info", "--json", entry]),
  ) as { modules: { specifier: string }[] };
  return info.modules.map((module) => module.specifier)
    .filter((specifier) => specifier.startsWith("file://"))
    .map((specifier) => relative(REPO_ROOT, new URL(specifier).pathname))
    .filter((path) => !path.startsWith("node_modules/"));
}

/** Every file and directory under `root`: mode and, for files, size and sha256. */
async function treeOf(root: string, dir = root): Promise<Map<string, string>> {
  const tree = new Map<string, string>();
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    const info = await Deno.lstat(path);
    const mode = (info.mode! & 0o7777).toString(8);
    const name = `/${relative(root, path)}`;
    if (entry.isDirectory) {
      tree.set(name, `dir ${mode}`);
      for (const [child, facts] of await treeOf(root, path)) tree.set(child, facts);
    } else {
      const digest = createHash("sha256").update(await Deno.readFile(path)).digest("hex");
      tree.set(name, `file ${mode} ${info.size} ${digest}`);
    }
  }
  return tree;
}

Deno.test("the Dockerfile's runtime stage is the image task's: FROM scratch, its labels, user, environment and entrypoint", async () => {
  const all = await instructions();
  strictEqual(Math.max(...all.map((i) => i.stage)), 1, "two stages");
  strictEqual(only(all, 1, "FROM"), "scratch");
  strictEqual(only(all, 1, "COPY"), "--from=build /rootfs/ /");
  strictEqual(only(all, 1, "USER"), IMAGE_USER);
  strictEqual(only(all, 1, "WORKDIR"), "/");
  strictEqual(only(all, 1, "ENTRYPOINT"), JSON.stringify(ENTRYPOINT));
  deepStrictEqual(parseAssignments(only(all, 1, "ENV")), IMAGE_ENV);
  // The labels, with the build arguments of docs/deploying.md's command in place of their values.
  const info = await readBuildInfo();
  const args = Object.fromEntries(
    all.filter((i) => i.stage === 1 && i.keyword === "ARG").map((i) => i.args.split("=")),
  );
  strictEqual(args.VERSION, info.version, "ARG VERSION is package.json's version");
  const labels = parseAssignments(only(all, 1, "LABEL"));
  const expected = imageLabels({ ...info, commit: "${REVISION}", version: "${VERSION}" });
  deepStrictEqual(labels, expected);
});

Deno.test("the Dockerfile's build stage compiles with the project's command and stages with the image task's script", async () => {
  const runs = (await instructions()).filter((i) => i.stage === 0 && i.keyword === "RUN")
    .map((i) => i.args);
  ok(runs.some((command) => command.startsWith("npm install")), "npm install");
  ok((await Deno.readTextFile(join(REPO_ROOT, ".ci/run"))).includes("npm install"));
  ok(
    runs.some((command) =>
      command.startsWith(
        'CSI_NODE_PROVISIONER_COMMIT="${REVISION}" node_modules/.bin/deno task compile',
      )
    ),
  );
  const tasks = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json"))).tasks;
  strictEqual(tasks.compile, "node_modules/.bin/deno run -A deploy/image/compile.ts");
  ok(
    runs.includes(
      `node_modules/.bin/deno run -A ${STAGING_SCRIPT} dist/csi-node-provisioner /rootfs`,
    ),
  );
});

Deno.test("the build stage copies every file main.ts and the image scripts need, and .dockerignore keeps them", async () => {
  const sources = copiedSources(await instructions());
  const ignore = (await Deno.readTextFile(join(DEPLOY_DIR, "Dockerfile.dockerignore")))
    .split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
  const allowed = ignore.filter((line) => line.startsWith("!")).map((line) => line.slice(1));
  ok(ignore[0] === "**", "the .dockerignore is an allow-list");
  for (const source of sources) ok(isCopied(source, allowed), `${source} is ignored`);
  const files = [
    ...await moduleGraphFiles("main.ts"),
    ...await moduleGraphFiles("deploy/image/compile.ts"),
    ...await moduleGraphFiles(STAGING_SCRIPT),
  ];
  ok(files.length > 50, `module graphs have ${files.length} local files`);
  for (const file of files) {
    ok(isCopied(file, sources), `${file} is imported but not copied`);
    ok(!file.endsWith("_test.ts"), `${file}: a test file is imported`);
  }
});

Deno.test("replaying the build stage on exactly the copied files stages the image's files, byte for byte", async () => {
  const build = await testImage();
  const all = await instructions();
  const dir = mkdtempSync(join(tmpdir(), "dockerfile-build-"));
  try {
    for (const source of copiedSources(all)) {
      cpSync(join(REPO_ROOT, source), join(dir, source), { recursive: true });
    }
    // What `npm install` makes from the same lock file: a directory inside the build context. Not
    // a symlink out of it: the bundler names the binary's chunks by the modules' paths relative to
    // the entry point's directory, so a node_modules elsewhere builds other bytes.
    await run("cp", ["-a", join(REPO_ROOT, "node_modules"), join(dir, "node_modules")]);
    const env = [
      `REVISION=${build.info.commit}`,
      `SOURCE_DATE_EPOCH=${build.info.epochSeconds}`,
    ];
    for (const command of all.filter((i) => i.stage === 0 && i.keyword === "RUN").slice(1)) {
      const script = command.args.replace(" /rootfs", ` ${dir}/rootfs`);
      await run("env", [...env, "sh", "-c", `cd ${dir} && ${script}`]);
    }
    await using image = await mountImage(build, hostPlatform());
    const staged = await treeOf(join(dir, "rootfs"));
    deepStrictEqual(staged, await treeOf(image.rootfs));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
