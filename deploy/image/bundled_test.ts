import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  bundledInstallPaths,
  checkedAgainstLock,
  installPath,
  type LockFile,
  NPM_ROOT,
  npmManifests,
} from "./bundled.ts";

Deno.test("installPath() takes the innermost package, scoped or not, through any prefix", () => {
  strictEqual(installPath("node_modules/ms/index.js"), "node_modules/ms");
  strictEqual(
    installPath("../main/node_modules/@grpc/grpc-js/build/src/index.js"),
    "node_modules/@grpc/grpc-js",
  );
  strictEqual(
    installPath("node_modules/a/node_modules/@s/b/lib/x.js"),
    "node_modules/a/node_modules/@s/b",
  );
  strictEqual(installPath("lib/model/keys.ts"), undefined);
});

Deno.test("only modules with bytes in an output are bundled", () => {
  const paths = bundledInstallPaths({
    outputs: {
      "./agent": {
        inputs: {
          "main.ts": { bytesInOutput: 10 },
          "node_modules/pino/pino.js": { bytesInOutput: 5 },
          "node_modules/shaken/index.js": { bytesInOutput: 0 },
        },
      },
      "./chunk.js": { inputs: { "node_modules/js-yaml/dist/js-yaml.mjs": { bytesInOutput: 1 } } },
      "./asset": {},
    },
  });
  deepStrictEqual(paths, ["node_modules/js-yaml", "node_modules/pino"]);
});

const LOCK: LockFile = {
  packages: { "node_modules/ms": { version: "2.1.3", integrity: "sha512-x" } },
};

Deno.test("a bundled package agrees with the lock file, or the release fails saying how", () => {
  deepStrictEqual(
    checkedAgainstLock({ name: "ms", version: "2.1.3", license: "MIT" }, "node_modules/ms", LOCK),
    {
      name: "ms",
      version: "2.1.3",
      license: "MIT",
      lockPath: "node_modules/ms",
      integrity: "sha512-x",
    },
  );
  throws(
    () =>
      checkedAgainstLock({ name: "ms", version: "2.1.2", license: "MIT" }, "node_modules/ms", LOCK),
    /2\.1\.2 in node_modules, 2\.1\.3 in package-lock\.json/,
  );
  throws(
    () =>
      checkedAgainstLock({ name: "y", version: "1.0.0", license: "MIT" }, "node_modules/y", LOCK),
    /not in package-lock\.json/,
  );
  throws(
    () => checkedAgainstLock({ name: "ms", version: "2.1.3" }, "node_modules/ms", LOCK),
    /names no license/,
  );
});

Deno.test("the image lists each bundled package as an installed package.json, nested ones nested", () => {
  const manifests = npmManifests([
    { name: "@s/a", version: "1.0.0", license: "MIT", lockPath: "node_modules/@s/a" },
    { name: "b", version: "2.0.0", license: "ISC", lockPath: "node_modules/c/node_modules/b" },
  ]);
  deepStrictEqual(manifests.map((m) => m.path), [
    `${NPM_ROOT}/node_modules/@s/a/package.json`,
    `${NPM_ROOT}/node_modules/c/node_modules/b/package.json`,
  ]);
  deepStrictEqual(JSON.parse(manifests[1]!.content), {
    name: "b",
    version: "2.0.0",
    license: "ISC",
  });
});
