import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { elfFactsOfFile, EM_X86_64 } from "./elf.ts";
import { parseLoaderList } from "./rootfs.ts";

Deno.test("parseLoaderList() reads ldd's lines and skips the vDSO", () => {
  const list = [
    "\tlinux-vdso.so.1 (0x00007ffc8a1f2000)",
    "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0e1c000000)",
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0e1c400000)",
    "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0e1bf00000)",
  ].join("\n");
  deepStrictEqual(parseLoaderList(list), [
    { name: "libc.so.6", path: "/lib/x86_64-linux-gnu/libc.so.6" },
    { name: "/lib64/ld-linux-x86-64.so.2", path: "/lib64/ld-linux-x86-64.so.2" },
    { name: "libm.so.6", path: "/lib/x86_64-linux-gnu/libm.so.6" },
  ]);
});

Deno.test("parseLoaderList() reads the arm64 loader under qemu-user, whose paths are the sysroot's", () => {
  const list = [
    "\t (0x0000000000200000)",
    "\tlibc.so.6 => /lib/libc.so.6 (0x0000005502850000)",
    "\t/lib/ld-linux-aarch64.so.1 => /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 (0x0000005500000000)",
  ].join("\n");
  deepStrictEqual(parseLoaderList(list), [
    { name: "libc.so.6", path: "/lib/libc.so.6" },
    {
      name: "/lib/ld-linux-aarch64.so.1",
      path: "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1",
    },
  ]);
});

Deno.test("a library the loader cannot find fails the build, naming it", () => {
  throws(() => parseLoaderList("\tlibfoo.so.1 => not found"), /cannot find libfoo\.so\.1/);
});

Deno.test("the ELF facts of this machine's shell: x86-64 and its loader", async () => {
  // Every x86-64 Debian has /bin/sh with the standard loader.
  if (Deno.build.arch !== "x86_64") return;
  const facts = await elfFactsOfFile("/bin/sh");
  strictEqual(facts.machine, EM_X86_64);
  strictEqual(facts.interpreter, "/lib64/ld-linux-x86-64.so.2");
});
