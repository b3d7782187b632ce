/**
 * Runtime floor 1 (bench/floor.ts): a compiled Bun program that prints one
 * line and stays alive, so its RSS and CPU are what Bun itself costs.
 */
console.log("ready");
setInterval(() => {}, 60_000);
