/**
 * Runtime floor 1 (bench/floor.ts): a compiled Bun program that prints one
 * line and stays alive, so its RSS and CPU are what Bun itself costs.
 */
// Exits as a program does (not killed by the signal), so that Bun writes the
// bytecode order of its start when bench/floor.ts records one.
process.on("SIGTERM", () => process.exit(0));
console.log("ready");
setInterval(() => {}, 60_000);
