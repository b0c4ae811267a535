/** 1,000 calls pipelined on one connection, answered out of order and matched by id. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Client } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree, since } from "./helpers";

const LATENCY_MS = 200;

describe("pipelining", () => {
  let tree: Tree;
  let server: Server;

  before(async () => {
    tree = makeTree(LATENCY_MS);
    server = await Server.start(tree);
  });
  after(async () => {
    await server.stop();
    removeTree(tree);
  });

  it("1,000 concurrent calls on one connection all come back to their callers", async () => {
    const client = new Client({ socket: tree.socket });
    const skills = ["triage_ticket", "extract_contact"];
    const inputs = [
      { subject: "Cannot log in", body: "help" },
      { text: "Ada Lovelace, ada@example.com, +44 20 7946 0000" },
    ];
    const start = Date.now();
    const calls = Array.from({ length: 1000 }, (_, i) => client.invoke<Record<string, unknown>>(skills[i % 2], inputs[i % 2], { timeoutMs: 30_000 }));
    // While they are in flight, the same client asks for health: one connection, many invocations.
    let health = await client.health();
    for (let i = 0; i < 50 && (health.in_flight as number) < 100; i++) health = await client.health();
    assert.equal(health.connections, 1, "one connection carries every call");
    assert.ok((health.in_flight as number) >= 100, `many invocations in flight at once (saw ${String(health.in_flight)})`);
    const results = await Promise.all(calls);
    const elapsed = since(start);
    results.forEach((r, i) => {
      assert.equal(r.skill, skills[i % 2], `call ${i} got its own answer`);
      assert.ok(i % 2 === 0 ? "priority" in r.output : "email" in r.output);
    });
    // One at a time they would take at least 1000 * 200 ms; pipelined they overlap.
    assert.ok(elapsed < 60_000, `took ${elapsed} ms`);
    const sequentialFloor = 1000 * LATENCY_MS;
    assert.ok(elapsed < sequentialFloor / 10, `pipelined (${elapsed} ms, serially >= ${sequentialFloor} ms)`);
    assert.equal((await client.health()).connections, 1);
    const invoked = server.invokeEvents();
    assert.equal(invoked.length, 1000);
    assert.equal(new Set(invoked.map((e) => e.conn)).size, 1, "the server saw a single connection");
    client.close();
  });
});
