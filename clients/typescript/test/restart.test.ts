/** A server restart: in-flight calls fail CONNECTION_LOST (never re-sent); new calls reconnect. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Client, ConnectionLostError } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree } from "./helpers";

const TICKET = { subject: "Cannot log in", body: "Since this morning." };

describe("server restart", () => {
  let tree: Tree;
  let server: Server;
  let client: Client;

  before(async () => {
    tree = makeTree(500);
    server = await Server.start(tree);
    client = new Client({ socket: tree.socket });
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
  });

  it("fails the in-flight call, refuses while down, reconnects after", async () => {
    assert.equal((await client.invoke("word_stats", { text: "a" })).skill, "word_stats");
    const inFlight = client.invoke("triage_ticket", TICKET, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    for (let i = 0; i < 200 && (await client.health()).in_flight !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    await server.stop("SIGKILL");
    const error: unknown = await inFlight;
    assert.ok(error instanceof ConnectionLostError, String(error));
    assert.equal(error.code, "CONNECTION_LOST");
    assert.match(error.message, /connection to .* lost/);

    const down: unknown = await client.health().catch((e: unknown) => e);
    assert.ok(down instanceof ConnectionLostError, String(down));
    assert.equal(down.details.phase, "connect");

    server = await Server.start(tree); // the dead server's socket file is replaced
    const result = await client.invoke<{ priority: number }>("triage_ticket", TICKET, { timeoutMs: 10_000 });
    assert.equal(result.skill, "triage_ticket");
    const health = await client.health();
    assert.equal(health.connections, 1);
    assert.equal(server.invokeEvents().length, 1, "the lost call was not re-sent");
  });

  it("close() fails the calls in flight and refuses later ones", async () => {
    const other = new Client({ socket: tree.socket });
    const inFlight = other.invoke("triage_ticket", TICKET).catch((e: unknown) => e);
    for (let i = 0; i < 200 && (await other.health()).in_flight !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    other.close();
    assert.ok((await inFlight) instanceof ConnectionLostError);
    await assert.rejects(other.health(), (e: unknown) => e instanceof ConnectionLostError && /closed/.test(e.message));
  });

  it("a draining server (SIGTERM) finishes the in-flight call; the next call reconnects", async () => {
    const inFlight = client.invoke("triage_ticket", TICKET);
    for (let i = 0; i < 200 && (await client.health()).in_flight !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    const stopped = server.stop("SIGTERM");
    assert.equal((await inFlight).skill, "triage_ticket");
    assert.equal(await stopped, 0);
    server = await Server.start(tree);
    assert.equal((await client.invoke("word_stats", { text: "a b" })).skill, "word_stats");
  });
});
