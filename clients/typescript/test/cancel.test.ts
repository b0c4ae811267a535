/** AbortSignal cancellation and the client-side deadline both send $/cancel; the server logs the cancel. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Client, SkillCancelledError, SkillTimeoutError } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree, since } from "./helpers";

const TICKET = { subject: "Cannot log in", body: "Since this morning." };

describe("cancellation", () => {
  let tree: Tree;
  let server: Server;
  let client: Client;

  before(async () => {
    tree = makeTree(1000);
    server = await Server.start(tree);
    client = new Client({ socket: tree.socket, timeoutGraceMs: 300 });
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
  });

  /** Waits until the server has `n` invocations in flight. */
  async function inFlight(n: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if ((await client.health()).in_flight === n) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`never ${n} in flight`);
  }

  it("aborting mid-flight rejects CANCELLED at once and the server logs the invocation cancelled", async () => {
    const controller = new AbortController();
    const start = Date.now();
    const call = client.invoke("triage_ticket", TICKET, { signal: controller.signal });
    const other = client.invoke("word_stats", { text: "a b" });
    await inFlight(1);
    controller.abort();
    const error: unknown = await call.catch((e: unknown) => e);
    assert.ok(error instanceof SkillCancelledError, String(error));
    assert.equal(error.code, "CANCELLED");
    assert.equal(error.details.client_side, true);
    assert.ok(since(start) < 1000, "rejected before the answer would have come");
    const line = await server.waitForLog((l) => l.includes('"event":"invoke"') && l.includes('"skill":"triage_ticket"'));
    const event = JSON.parse(line) as Record<string, unknown>;
    assert.equal(event.outcome, "CANCELLED", line);
    assert.ok((event.duration_ms as number) < 1000);
    assert.equal((await other).skill, "word_stats", "the other call on the connection is unaffected");
  });

  it("an already aborted signal rejects without sending anything", async () => {
    const before = ((await client.call("metrics")) as { requests: Record<string, number> }).requests["skills.invoke"];
    const controller = new AbortController();
    controller.abort(new Error("caller gave up"));
    const error: unknown = await client.invoke("triage_ticket", TICKET, { signal: controller.signal }).catch((e: unknown) => e);
    assert.ok(error instanceof SkillCancelledError);
    assert.match(error.message, /caller gave up/);
    const after = ((await client.call("metrics")) as { requests: Record<string, number> }).requests["skills.invoke"];
    assert.equal(after, before);
  });

  it("past the deadline plus grace the client sends $/cancel and rejects TIMEOUT", async () => {
    await server.freeze(); // the server cannot answer, not even its own TIMEOUT
    const start = Date.now();
    let error: unknown;
    try {
      error = await client.invoke("extract_contact", { text: "Ada" }, { timeoutMs: 200 }).catch((e: unknown) => e);
    } finally {
      server.signal("SIGCONT");
    }
    const elapsed = since(start);
    assert.ok(error instanceof SkillTimeoutError, String(error));
    assert.equal(error.code, "TIMEOUT");
    assert.equal(error.details.client_side, true);
    // Node's timers run off the event loop's cached clock, which can be a millisecond or two behind
    // Date.now(): a 500 ms give-up measured 499 ms once.
    assert.ok(elapsed >= 495 && elapsed < 3000, `gave up after ${elapsed} ms (200 + 300 grace)`);
    // Resumed, the server reads the invoke and then the $/cancel.
    const line = await server.waitForLog((l) => l.includes('"event":"invoke"') && l.includes('"skill":"extract_contact"'));
    assert.match(line, /"outcome":"CANCELLED"/, "the $/cancel reached the server");
    assert.ok((JSON.parse(line) as { duration_ms: number }).duration_ms < 1000, "stopped before the provider's answer");
    assert.equal((await client.health()).status, "ok", "the connection is still good");
  });
});
