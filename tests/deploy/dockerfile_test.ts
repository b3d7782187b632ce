/**
 * deploy/Dockerfile cannot be built here (no Docker), so its build stage is
 * replayed instead: the files it copies (and its .dockerignore lets through)
 * are all that main.ts's module graph needs, its RUN commands are the
 * project's own (`npm install` as .ci/run, `deno task compile`), running them on
 * a copy of exactly those files yields a working binary, and that binary
 * needs nothing the distroless runtime image lacks. The runtime stage runs
 * it as a non-root user.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { REPO_ROOT } from "../cluster/drivers.ts";
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

const DOCKERFILE = join(DEPLOY_DIR, "Dockerfile");
/** What gcr.io/distroless/cc-debian12 ships: glibc, libgcc and libstdc++. */
const DISTROLESS_CC_LIBS = new Set([
  "linux-vdso.so.1",
  "ld-linux-x86-64.so.2",
  "libc.so.6",
  "libm.so.6",
  "libpthread.so.0",
  "libdl.so.2",
  "librt.so.1",
  "libgcc_s.so.1",
  "libstdc++.so.6",
]);

async function instructions(): Promise<Instruction[]> {
  return parseDockerfile(await Deno.readTextFile(DOCKERFILE));
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

/** Local files of main.ts's module graph, relative to the repository root. */
async function moduleGraphFiles(): Promise<string[]> {
  const info = JSON.parse(
    await run(join(REPO_ROOT, "node_modules/.bin/deno"), ["info", "--json", "main.ts"]),
  ) as { modules: { specifier: string }[] };
  return info.modules.map((module) => module.specifier)
    .filter((specifier) => specifier.startsWith("file://"))
    .map((specifier) => relative(REPO_ROOT, new URL(specifier).pathname))
    .filter((path) => !path.startsWith("node_modules/"));
}

Deno.test("the Dockerfile's build stage runs the project's own commands", async () => {
  const all = await instructions();
  const runs = all.filter((i) => i.stage === 0 && i.keyword === "RUN").map((i) => i.args);
  ok(runs.some((command) => command.startsWith("npm install")), "npm install");
  ok((await Deno.readTextFile(join(REPO_ROOT, ".ci/run"))).includes("npm install"));
  ok(runs.some((command) => command.startsWith("node_modules/.bin/deno task compile")));
  const tasks = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json"))).tasks;
  const outfile = (tasks.compile as string).match(/--outfile (\S+)/)?.[1];
  strictEqual(outfile, "dist/csi-node-provisioner");
  const workdir = all.find((i) => i.stage === 0 && i.keyword === "WORKDIR")?.args;
  const copy = all.find((i) => i.stage === 1 && i.keyword === "COPY")!.args.split(" ");
  deepStrictEqual(copy.slice(0, 2), ["--from=build", `${workdir}/${outfile}`]);
  // The runtime stage: distroless, a numeric non-root user, the copied binary.
  const base = all.find((i) => i.stage === 1 && i.keyword === "FROM")!.args;
  ok(base.startsWith("gcr.io/distroless/cc-debian12"), base);
  const user = all.find((i) => i.stage === 1 && i.keyword === "USER")!.args;
  ok(/^[1-9]\d*:[1-9]\d*$/.test(user), `non-root numeric user, got ${user}`);
  strictEqual(
    all.find((i) => i.stage === 1 && i.keyword === "ENTRYPOINT")!.args,
    JSON.stringify([copy[2]]).replaceAll(",", ", "),
  );
});

Deno.test("the build stage copies every file main.ts needs, and .dockerignore keeps them", async () => {
  const sources = copiedSources(await instructions());
  const ignore = (await Deno.readTextFile(join(DEPLOY_DIR, "Dockerfile.dockerignore")))
    .split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
  const allowed = ignore.filter((line) => line.startsWith("!")).map((line) => line.slice(1));
  ok(ignore[0] === "**", "the .dockerignore is an allow-list");
  for (const source of sources) ok(isCopied(source, allowed), `${source} is ignored`);
  const files = await moduleGraphFiles();
  ok(files.length > 50, `module graph has ${files.length} local files`);
  for (const file of files) {
    ok(isCopied(file, sources), `${file} is imported by main.ts but not copied`);
    ok(!file.endsWith("_test.ts"), `${file}: main.ts imports a test file`);
  }
});

Deno.test("replaying the build stage on exactly the copied files makes a working binary", async () => {
  const all = await instructions();
  const dir = mkdtempSync(join(tmpdir(), "dockerfile-build-"));
  try {
    for (const source of copiedSources(all)) {
      cpSync(join(REPO_ROOT, source), join(dir, source), { recursive: true });
    }
    // What `npm install` makes from the same lock file.
    symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
    const compile = all.find((i) => i.stage === 0 && i.args.includes("deno task compile"))!;
    await run("sh", ["-c", `cd ${dir} && ${compile.args}`]);
    const binary = join(dir, "dist/csi-node-provisioner");
    const version = await run(binary, ["--version"]);
    ok(/^csi-node-provisioner \d+\.\d+\.\d+/.test(version), version);
    const libraries = [...(await run("ldd", [binary])).matchAll(/^\s*(\S+\.so(?:\.\d+)*)/gm)]
      .map((match) => match[1]!.replace(/^.*\//, ""));
    ok(libraries.length > 0, "dynamically linked");
    for (const library of libraries) {
      ok(DISTROLESS_CC_LIBS.has(library), `${library} is not in distroless/cc`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
