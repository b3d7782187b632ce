import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { imagePackage, parseInstalled, parseOwners, statusStanza } from "./dpkg_status.ts";
import { LINUX_ARM64, LINUX_X64 } from "./platforms.ts";

const MAINTAINER = "GNU Libc Maintainers <debian-glibc@lists.debian.org>";

Deno.test("parseOwners() reads dpkg-query -S lines without the architecture", () => {
  const owners = parseOwners(
    "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6\n" +
      "libc6-arm64-cross: /usr/aarch64-linux-gnu/lib/libc.so.6\n",
  );
  deepStrictEqual(
    [...owners],
    [
      ["/lib/x86_64-linux-gnu/libc.so.6", "libc6"],
      ["/usr/aarch64-linux-gnu/lib/libc.so.6", "libc6-arm64-cross"],
    ],
  );
});

Deno.test("a file two packages own fails rather than naming one of them", () => {
  throws(() => parseOwners("a, b: /lib/x.so\n"), /more than one package owns \/lib\/x\.so/);
});

Deno.test("the host's libc6 is written as installed, with glibc's license", () => {
  const installed = parseInstalled(
    `libc6\t2.36-9+deb12u14\tamd64\tglibc\t2.36-9+deb12u14\t${MAINTAINER}\t`,
  );
  const pkg = imagePackage(installed, LINUX_X64);
  deepStrictEqual(pkg, {
    name: "libc6",
    version: "2.36-9+deb12u14",
    architecture: "amd64",
    source: "glibc",
    sourceVersion: "2.36-9+deb12u14",
    maintainer: MAINTAINER,
    license: "LGPL-2.1-or-later",
  });
  strictEqual(
    statusStanza(pkg),
    "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nSource: glibc\n" +
      `Version: 2.36-9+deb12u14\nMaintainer: ${MAINTAINER}\n`,
  );
});

Deno.test("the cross C library is the target's libc6 at the glibc it was built from", () => {
  const installed = parseInstalled(
    `libc6-arm64-cross\t2.36-8cross1\tall\tcross-toolchain-base\t66\t${MAINTAINER}\t` +
      "binutils (= 2.40-2), linux (= 6.1.4-1), gcc-12 (= 12.2.0-14), glibc (= 2.36-8)",
  );
  const pkg = imagePackage(installed, LINUX_ARM64);
  strictEqual(pkg.name, "libc6");
  strictEqual(pkg.version, "2.36-8");
  strictEqual(pkg.architecture, "arm64");
  strictEqual(pkg.source, "glibc");
  deepStrictEqual(pkg.installedAs, { name: "libc6-arm64-cross", version: "2.36-8cross1" });
});

Deno.test("a cross package without glibc in Built-Using fails", () => {
  const installed = parseInstalled(`libc6-arm64-cross\t1\tall\tx\t1\t${MAINTAINER}\t`);
  throws(() => imagePackage(installed, LINUX_ARM64), /names no glibc/);
});

Deno.test("a source version unlike the package's is written in parentheses, as dpkg does", () => {
  const pkg = imagePackage(
    parseInstalled(`libfoo1\t1.0-1+b2\tamd64\tfoo\t1.0-1\tM <m@x>\t`),
    LINUX_X64,
  );
  strictEqual(statusStanza(pkg).split("\n")[3], "Source: foo (1.0-1)");
  strictEqual(pkg.license, undefined);
});
