/** OVERLOADED under a small --max-in-flight: retried after retry_after_ms within the deadline. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Client, OverloadedError } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree, since } from "./helpers";

const TICKET = { subject: "Cannot log in", body: "Since this morning." };

describe("OVERLOADED", () => {
  let tree: Tree;
  let server: Server;
  let client: Client;

  before(async () => {
    tree = makeTree(300);
    server = await Server.start(tree, { args: ["--max-in-flight", "1"] });
    client = new Client({ socket: tree.socket });
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
  });

  /** Requests the server refused so far (its metrics' `rejected` counters). */
  async function rejected(): Promise<number> {
    const metrics = (await client.call("metrics")) as { rejected: Record<string, number> };
    return Object.values(metrics.rejected).reduce((a, b) => a + b, 0);
  }

  /** Starts a call that holds the one slot, and waits until it does (the call is wrapped: an async function would wait for it). */
  async function hold(seconds: number): Promise<{ call: Promise<unknown> }> {
    const call = client.invoke("h_sleep", { seconds });
    for (let i = 0; i < 200 && (await client.health()).in_flight !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    return { call };
  }

  // The server's retry_after_ms at an in-flight limit is the median duration of
  // its recent invocations (1000 ms before any has finished): the tests run in
  // this order against one server.
  it("a deadline the retry hint does not fit: OverloadedError at once", async () => {
    const holder = await hold(1);
    const start = Date.now();
    const error: unknown = await client.invoke("triage_ticket", TICKET, { timeoutMs: 150 }).catch((e: unknown) => e);
    assert.ok(error instanceof OverloadedError, String(error));
    assert.equal(error.details.retries, 0);
    assert.ok(since(start) < 150);
    await holder.call;
  });

  it("succeeds after the server's retry_after_ms", async () => {
    const holder = await hold(1);
    const refusedBefore = await rejected();
    const start = Date.now();
    const second = await client.invoke<{ priority: number }>("triage_ticket", TICKET, { timeoutMs: 10_000 });
    assert.equal(second.skill, "triage_ticket");
    assert.ok((await rejected()) > refusedBefore, "the server refused it at least once: the client retried");
    assert.ok(since(start) >= 900, "it waited for retry_after_ms (the holder's second, the only one finished)");
    await holder.call;
  });

  it("without a deadline: 5 retries, then OverloadedError", async () => {
    // Quick invocations make the recent median, and so the server's hint, short.
    for (let i = 0; i < 15; i++) await client.invoke("h_sleep", { seconds: 0 });
    const holder = await hold(2.5);
    const refusedBefore = await rejected();
    const error: unknown = await client.invoke("triage_ticket", TICKET).catch((e: unknown) => e);
    assert.ok(error instanceof OverloadedError, String(error));
    assert.equal(error.code, "OVERLOADED");
    assert.equal(error.details.retries, 5);
    const hint = error.details.retry_after_ms as number;
    assert.ok(hint >= 10 && hint < 1000, `retry_after_ms ${hint}`);
    assert.equal((await rejected()) - refusedBefore, 6, "the first try and 5 retries");
    await holder.call;
  });
});
