/**
 * Every relative link in README.md and docs/*.md leads somewhere: the file
 * exists, and an #anchor into our own Markdown names one of its headings, as
 * GitHub renders them. Moving a section between pages breaks its anchors
 * without a word otherwise.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

/** Fenced code blocks hold neither headings nor links. */
function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "").replaceAll(" ", "-");
}

/** The anchors of a Markdown text's headings (a repeated heading gets -1, -2, ... as on GitHub). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const match of withoutCodeBlocks(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = slug(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The targets of a Markdown text's inline links, outside code. */
export function linkTargets(markdown: string): string[] {
  const text = withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

/** What is wrong with each relative link of `file` (a path under `root`). */
export function brokenLinks(root: string, file: string): string[] {
  const markdown = readFileSync(join(root, file), "utf8");
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = path === "" ? join(root, file) : join(root, dirname(file), path);
    if (!existsSync(resolved)) {
      problems.push(`${file}: ${target}: no ${relative(root, resolved)}`);
    } else if (anchor !== undefined && resolved.endsWith(".md")) {
      if (!anchors(readFileSync(resolved, "utf8")).has(anchor)) {
        problems.push(`${file}: ${target}: no heading #${anchor}`);
      }
    }
  }
  return problems;
}

function documents(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md"));
  return ["README.md", ...docs.sort().map((name) => `docs/${name}`)];
}

Deno.test("headings get GitHub's anchors", () => {
  strictEqual(slug("Capacity (`--enable-capacity`)"), "capacity---enable-capacity");
  strictEqual(
    slug("Immediate binding: the ownership race"),
    "immediate-binding-the-ownership-race",
  );
  strictEqual(slug("Into a driver's own DaemonSet"), "into-a-drivers-own-daemonset");
  deepStrictEqual(
    [...anchors("# A\n```sh\n# not a heading\n```\n## A\n## B c\n")],
    ["a", "a-1", "b-c"],
  );
});

Deno.test("a missing file and a missing heading are reported", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(join(dir, "docs"));
    Deno.writeTextFileSync(join(dir, "docs/a.md"), "# Here\n");
    Deno.writeTextFileSync(
      join(dir, "README.md"),
      "[ok](docs/a.md#here) [gone](docs/b.md) [anchor](docs/a.md#there) [self](#nowhere)\n" +
        "`[code](docs/c.md)` [web](https://example.com)\n",
    );
    deepStrictEqual(brokenLinks(dir, "README.md"), [
      "README.md: docs/b.md: no docs/b.md",
      "README.md: docs/a.md#there: no heading #there",
      "README.md: #nowhere: no heading #nowhere",
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("every relative link in README.md and docs/ leads to a file and a heading", () => {
  const files = documents();
  deepStrictEqual(files.flatMap((file) => brokenLinks(ROOT, file)), []);
});
