/**
 * The Immediate binding race on fake time with in-memory fakes of its ports
 * (tests/fakes/race_world.ts): its timers, its turns, how it ends, and the
 * Warnings about claims nobody can take, for one agent and for ten.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  sourceClaim,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
} from "../../../tests/builders/provision.ts";
import {
  addClaim,
  changeClaim,
  GI,
  publish,
  raceAgent,
  raceWorld,
  runFor,
  sync,
  unownedClaim,
} from "../../../tests/fakes/race_world.ts";
import type { Claim } from "../../model/objects.ts";

const IMMEDIATE = storageClass({ volumeBindingMode: "Immediate" });

function selectedTo(claim: Claim, node: string): Claim {
  return {
    ...claim,
    metadata: {
      ...claim.metadata,
      resourceVersion: "43",
      annotations: { ...claim.metadata.annotations, "volume.kubernetes.io/selected-node": node },
    },
  };
}

Deno.test("a race waits its jittered delay on a timer, checks capacity, patches selected-node; the winner ends it", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a" });
  const key = await addClaim(world, [agent], unownedClaim("data"));
  strictEqual(agent.race.size, 1);
  // random 0.5: the first delay is base − 0.5·base = 500 ms.
  world.clock.advance(499);
  deepStrictEqual(agent.queue, []);
  world.clock.advance(1);
  deepStrictEqual(agent.queue, [key]);
  await sync(world, agent, agent.queue.shift()!);
  strictEqual(agent.capacityCalls, 1);
  deepStrictEqual(agent.patches, ["data@42->node-a"], "with the cached resourceVersion");
  deepStrictEqual(agent.attempts, ["selected"]);
  changeClaim(world, [agent], { key, claim: selectedTo(world.claims.get(key)!, "node-a") });
  strictEqual(agent.race.size, 0);
  strictEqual(world.clock.pendingTimers(), 0);
});

Deno.test("a 409 tries again after the next, longer delay; the winner seen in the cache ends the race", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a", select: ["conflict"] });
  const key = await addClaim(world, [agent], unownedClaim("data"));
  await runFor(world, [agent], 500);
  deepStrictEqual(agent.attempts, ["conflict"]);
  // Second attempt: 2·base − 0.5·base = 1500 ms.
  await runFor(world, [agent], 1450);
  strictEqual(agent.patches.length, 1);
  changeClaim(world, [agent], { key, claim: selectedTo(world.claims.get(key)!, "node-b") });
  strictEqual(agent.race.size, 0, "the informer's change ended the race");
  strictEqual(world.clock.pendingTimers(), 0, "and cancelled its timer");
  await runFor(world, [agent], 5000);
  strictEqual(agent.patches.length, 1, "no attempt after another node won");
  strictEqual(world.clock.pendingTimers(), 0);
});

Deno.test("races do not hold workers: 200 claims race at once, each on its own timer", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a" });
  for (let index = 0; index < 200; index++) {
    await addClaim(world, [agent], unownedClaim(`c${index}`));
  }
  strictEqual(agent.race.size, 200);
  strictEqual(world.clock.pendingTimers(), 200);
  strictEqual(agent.capacityCalls, 0, "no turn before the delay");
});

Deno.test("a node whose own published capacity is below the request declines with no GetCapacity call", async () => {
  const world = raceWorld(IMMEDIATE);
  publish(world, "node-a", GI / 2n);
  const agent = raceAgent(world, { node: "node-a", publishes: true });
  await addClaim(world, [agent], unownedClaim("data"));
  await runFor(world, [agent], 3000);
  strictEqual(agent.capacityCalls, 0);
  deepStrictEqual(agent.patches, []);
  deepStrictEqual(agent.declines, ["published-capacity", "published-capacity"]);
});

Deno.test("more published room, sooner: upstream's jittered delay times 1/(1+log2(free/requested)/4), at least 1/4", async () => {
  const cases = [[GI, 500], [16n * GI, 250], [4096n * GI, 125], [8192n * GI, 125]] as const;
  for (const [free, delay] of cases) {
    const world = raceWorld(IMMEDIATE);
    publish(world, "node-a", free);
    const agent = raceAgent(world, { node: "node-a", publishes: true });
    await addClaim(world, [agent], unownedClaim("data"));
    world.clock.advance(delay - 1);
    strictEqual(agent.queue.length, 0, `${free} free: not before ${delay} ms`);
    world.clock.advance(1);
    strictEqual(agent.queue.length, 1, `${free} free: at ${delay} ms`);
  }
});

Deno.test("the GetCapacity call times out: no patch, and the node tries again after its next delay", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a", capacity: "hang" });
  await addClaim(world, [agent], unownedClaim("data"));
  world.clock.advance(500);
  const turn = sync(world, agent, agent.queue.shift()!);
  world.clock.advance(500); // --timeout of the fake agent
  await turn;
  deepStrictEqual(agent.declines, ["capacity-check-failed"]);
  deepStrictEqual(agent.patches, []);
  strictEqual(world.clock.pendingTimers(), 1, "the next turn is armed");
});

Deno.test("a claim deleted mid-race ends the race: its timer goes, its patch waiting for the API is cancelled", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a", select: ["hang"] });
  const first = await addClaim(world, [agent], unownedClaim("waiting"));
  changeClaim(world, [agent], { key: first, claim: undefined });
  strictEqual(agent.race.size, 0);
  strictEqual(world.clock.pendingTimers(), 0);

  const key = await addClaim(world, [agent], unownedClaim("patching"));
  world.clock.advance(500);
  const turn = sync(world, agent, agent.queue.shift()!);
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(agent.patches, ["patching@42->node-a"]);
  changeClaim(world, [agent], { key, claim: undefined });
  await turn;
  deepStrictEqual(agent.attempts, [], "an abandoned patch is not an error");
  strictEqual(agent.race.size, 0);
  strictEqual(world.clock.pendingTimers(), 0);
});

Deno.test("a claim replaced under the same name starts a new race", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a" });
  const key = await addClaim(world, [agent], unownedClaim("data", { uid: "old" }));
  world.clock.advance(500);
  changeClaim(world, [agent], { key, claim: unownedClaim("data", { uid: "new" }) });
  strictEqual(agent.race.size, 0);
  await sync(world, agent, key);
  strictEqual(agent.race.size, 1);
  await runFor(world, [agent], 500);
  deepStrictEqual(agent.patches, ["data@42->node-a"]);
});

Deno.test("released after ResourceExhausted: this node's next delay for the claim is one step longer", async () => {
  const world = raceWorld(IMMEDIATE);
  const agent = raceAgent(world, { node: "node-a" });
  agent.race.released("uid-data");
  await addClaim(world, [agent], unownedClaim("data"));
  world.clock.advance(1499);
  strictEqual(agent.queue.length, 0);
  world.clock.advance(1);
  strictEqual(agent.queue.length, 1, "2·base − jitter");
});

Deno.test("a node outside the class's allowedTopologies never races", async () => {
  const world = raceWorld(storageClass({
    volumeBindingMode: "Immediate",
    allowedTopologies: [{ matchLabelExpressions: [{ key: TOPOLOGY_KEY, values: ["node-b"] }] }],
  }));
  const outside = raceAgent(world, { node: "node-a" });
  const inside = raceAgent(world, { node: "node-b" });
  await addClaim(world, [outside, inside], unownedClaim("data"));
  strictEqual(outside.race.size, 0);
  deepStrictEqual(outside.declines, ["topology"]);
  await runFor(world, [outside, inside], 1000);
  deepStrictEqual(outside.patches, []);
  strictEqual(outside.capacityCalls, 0);
  deepStrictEqual(inside.patches, ["data@42->node-b"]);
});

Deno.test("only the node that holds a clone's source races for it: the others never patch selected-node", async () => {
  const world = raceWorld(IMMEDIATE);
  world.sourceClaims.set("apps/origin", sourceClaim());
  world.sources.volumes.set("pv-origin", sourceVolume({ node: "node-b" }));
  const agents = ["node-a", "node-b", "node-c"].map((node) => raceAgent(world, { node }));
  const [elsewhere, , other] = agents;
  const clone = unownedClaim("copy");
  clone.spec.dataSource = { kind: "PersistentVolumeClaim", name: "origin" };
  await addClaim(world, agents, clone);
  deepStrictEqual(agents.map((agent) => agent.race.size), [0, 1, 0]);
  deepStrictEqual(elsewhere!.declines, ["source"]);
  deepStrictEqual(other!.declines, ["source"]);
  await runFor(world, agents, 1000);
  deepStrictEqual(agents.map((agent) => agent.patches), [[], ["copy@42->node-b"], []]);
  strictEqual(elsewhere!.capacityCalls + other!.capacityCalls, 0);
});

Deno.test("10 nodes, 50 claims that fit nowhere: 50 summaries (one agent each) after the max delay, again after an hour", async () => {
  const world = raceWorld(IMMEDIATE);
  const nodes = Array.from({ length: 10 }, (_, index) => `node-${index}`);
  nodes.forEach((node, index) => publish(world, node, BigInt(index + 1) * GI));
  const agents = nodes.map((node) => raceAgent(world, { node, publishes: true }));
  for (let index = 0; index < 50; index++) {
    await addClaim(world, agents, unownedClaim(`big-${index}`, { size: "20Gi" }));
  }
  const summaries = () => agents.flatMap((agent) => agent.events);
  await runFor(world, agents, 4000, 100);
  strictEqual(summaries().length, 0, "nothing before the max delay");
  await runFor(world, agents, 8000, 100);
  strictEqual(summaries().length, 50);
  strictEqual(new Set(summaries().map((event) => event.subject.name)).size, 50);
  const [first] = summaries();
  deepStrictEqual({ ...first, subject: undefined }, {
    subject: undefined,
    type: "Warning",
    reason: "NotEnoughCapacity",
    message:
      "no node has 20Gi free in class fast: largest is node-9 with 10Gi (10 nodes publish capacity)",
  });
  strictEqual(agents.reduce((sum, agent) => sum + agent.capacityCalls, 0), 0);
  await runFor(world, agents, 60 * 60 * 1000 - 20_000, 4000);
  strictEqual(summaries().length, 50, "not again within the hour");
  await runFor(world, agents, 30_000, 4000);
  strictEqual(summaries().length, 100, "once more after an hour");
});

Deno.test("without published capacity, each node reports its own decline, at most once an hour", async () => {
  const world = raceWorld(IMMEDIATE);
  const agents = ["node-a", "node-b", "node-c"].map((node) =>
    raceAgent(world, { node, capacity: GI / 2n })
  );
  await addClaim(world, agents, unownedClaim("big"));
  await runFor(world, agents, 12_000, 100);
  deepStrictEqual(agents.map((agent) => agent.events.map((event) => event.message)), [
    ["node node-a has 512Mi free in class fast (GetCapacity), the claim requests 1Gi"],
    ["node node-b has 512Mi free in class fast (GetCapacity), the claim requests 1Gi"],
    ["node node-c has 512Mi free in class fast (GetCapacity), the claim requests 1Gi"],
  ]);
  await runFor(world, agents, 60 * 60 * 1000, 4000);
  deepStrictEqual(agents.map((agent) => agent.events.length), [2, 2, 2]);
});

Deno.test("a summary is not written while a node that may race publishes enough", async () => {
  const world = raceWorld(IMMEDIATE);
  publish(world, "node-a", GI / 2n);
  publish(world, "node-b", 4n * GI);
  // node-b's agent is down: the claim stays unowned, but its figures say it fits.
  const agent = raceAgent(world, { node: "node-a", publishes: true });
  await addClaim(world, [agent], unownedClaim("data"));
  await runFor(world, [agent], 20_000, 100);
  deepStrictEqual(agent.events, []);
});

Deno.test("a node that wins many claims at once wins no more than its pool holds", async () => {
  const world = raceWorld(IMMEDIATE);
  // The driver's answer lags: it keeps saying 3Gi while this node's volumes are not created yet.
  const agent = raceAgent(world, { node: "node-a", capacity: 3n * GI });
  for (let index = 0; index < 5; index++) await addClaim(world, [agent], unownedClaim(`c${index}`));
  await runFor(world, [agent], 600);
  deepStrictEqual(agent.attempts, ["selected", "selected", "selected"]);
  deepStrictEqual(agent.declines, ["capacity", "capacity"]);
  agent.race.answered("apps/c0", "uid-c0");
  await runFor(world, [agent], 2000);
  strictEqual(
    agent.attempts.length,
    4,
    "c0's volume exists (the driver counts it): room for one more",
  );
});

Deno.test("two turns whose GetCapacity answers arrive together do not both count on the same bytes", async () => {
  const world = raceWorld(IMMEDIATE);
  let answer = () => {};
  const gate = new Promise<void>((resolve) => (answer = resolve));
  // Room for one 1Gi volume, not two: both turns ask before either has committed.
  const agent = raceAgent(world, { node: "node-a", capacity: 3n * GI / 2n, capacityGate: gate });
  for (const name of ["c0", "c1"]) await addClaim(world, [agent], unownedClaim(name));
  for (let ms = 0; ms < 2000 && agent.queue.length < 2; ms += 50) world.clock.advance(50);
  // Two workers take the two turns at once.
  const turns = agent.queue.splice(0).map((key) => sync(world, agent, key));
  await new Promise((resolve) => setTimeout(resolve, 0));
  strictEqual(agent.capacityCalls, 2, "both turns are waiting for GetCapacity");
  answer();
  await Promise.all(turns);
  deepStrictEqual(agent.attempts, ["selected"]);
  deepStrictEqual(agent.declines, ["capacity"]);
});
