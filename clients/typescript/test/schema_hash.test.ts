/**
 * schemaHash: checked against skills.list once per connection. Against a real
 * serve (skipped while its skills.list has no schema_hash), and against a
 * scripted fake server for the client's side of it.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { Client, ConnectionLostError, ProtocolError, SchemaChangedError } from "skillrunner-client";
import { Server, Tree, canonicalJson, makeTree, removeTree, schemaHash } from "./helpers";

const TICKET = { subject: "Cannot log in", body: "Since this morning." };
const WRONG = "sha256:" + "0".repeat(64);

describe("schemaHash against a real serve", () => {
  let tree: Tree;
  let server: Server;
  let client: Client;
  let hasField = false;

  before(async () => {
    tree = makeTree(0);
    server = await Server.start(tree);
    client = new Client({ socket: tree.socket });
    hasField = (await client.list()).some((s) => typeof s.schema_hash === "string");
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
  });

  /** The hash the client computes from skills.describe. */
  async function expectedHash(c: Client, skill: string): Promise<string> {
    const d = await c.describe(skill);
    return schemaHash(d.input_schema, d.output_schema);
  }

  /** skills.list requests the server has answered. */
  async function listRequests(c: Client): Promise<number> {
    return ((await c.call("metrics")) as { requests: Record<string, number> }).requests["skills.list"] ?? 0;
  }

  it("matches, mismatches and a changed skill", async (t) => {
    if (!hasField) {
      t.skip(`the server's skills.list has no schema_hash yet (${process.env.SKILLRUNNER_BINARY ?? "build/skillrunner"})`);
      return;
    }
    const expected = await expectedHash(client, "triage_ticket");
    const listed = (await client.list()).find((s) => s.id === "triage_ticket");
    assert.equal(listed?.schema_hash, expected, "the server's hash is sha256 of the canonical {input, output}");
    // A connection of its own: one that listed the skills already (as `client` did) checks against that answer.
    const first = new Client({ socket: tree.socket });
    const wordStats = await expectedHash(client, "word_stats");
    const listsBefore = await listRequests(client);
    const ok = await Promise.all([1, 2, 3].map(() => first.invoke("triage_ticket", TICKET, { schemaHash: expected })));
    assert.equal(ok.length, 3);
    await first.invoke("word_stats", { text: "a" }, { schemaHash: wordStats });
    first.close();
    assert.equal((await listRequests(client)) - listsBefore, 1, "one skills.list per connection, shared by concurrent first calls");

    const e: unknown = await client.invoke("triage_ticket", TICKET, { schemaHash: WRONG }).catch((x: unknown) => x);
    assert.ok(e instanceof SchemaChangedError, String(e));
    assert.equal(e.message, `skill "triage_ticket" changed on the server: generated against ${WRONG}, server has ${expected}`);
    assert.deepEqual(e.details, { skill: "triage_ticket", expected: WRONG, actual: expected });

    // Change the skill's schema and reload: a new connection sees the new hash.
    const file = path.join(tree.skills, "triage_ticket", "skill.yaml");
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("body: { type: string }", "body: { type: string, maxLength: 5000 }"));
    await client.reload();
    const fresh = new Client({ socket: tree.socket });
    const changed: unknown = await fresh.invoke("triage_ticket", TICKET, { schemaHash: expected }).catch((x: unknown) => x);
    assert.ok(changed instanceof SchemaChangedError, String(changed));
    const now = await expectedHash(fresh, "triage_ticket");
    assert.notEqual(now, expected);
    assert.match(changed.message, new RegExp(`"triage_ticket".*${expected}.*${now}`));
    fresh.close();
  });
});

/** A fake server that answers skills.list with given hashes and invoke with a fixed result. */
class FakeServer {
  readonly path = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "srts-fake-")), "s.sock");
  lists = 0;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(
    private hashes: Record<string, string>,
    private readonly onLine: (req: Record<string, unknown>, socket: net.Socket) => boolean = () => false,
  ) {
    this.server = net.createServer((socket) => this.serve(socket));
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.path, resolve));
  }

  /** Drops every connection (the client must reconnect) and changes the hashes. */
  dropAll(hashes: Record<string, string>): void {
    this.hashes = hashes;
    for (const s of this.sockets) s.destroy();
  }

  close(): Promise<void> {
    this.dropAll({});
    return new Promise((resolve) => this.server.close(() => {
      fs.rmSync(path.dirname(this.path), { recursive: true, force: true });
      resolve();
    }));
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    let buffer = "";
    socket.on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const req = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        if (!this.onLine(req, socket)) this.answer(req, socket);
      }
    });
  }

  private answer(req: Record<string, unknown>, socket: net.Socket): void {
    if (req.method === "skills.list") {
      this.lists++;
      const result = Object.entries(this.hashes).map(([id, h]) => ({ id, version: 1, schema_hash: h }));
      setTimeout(() => socket.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result }) + "\n"), 20);
    } else if (req.method === "skills.invoke") {
      const skill = (req.params as { skill: string }).skill;
      socket.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { skill, output: { ok: true }, attempts: [], metrics: {} } }) + "\n");
    }
  }
}

describe("schemaHash, the client's side (scripted server)", () => {
  const A = "sha256:" + "a".repeat(64);
  const B = "sha256:" + "b".repeat(64);

  it("lists once per connection, again after a reconnect, and names both hashes", async () => {
    const fake = new FakeServer({ s1: A, s2: A });
    await fake.listen();
    const client = new Client({ socket: fake.path });
    await Promise.all([client.invoke("s1", {}, { schemaHash: A }), client.invoke("s2", {}, { schemaHash: A }), client.invoke("s1", {}, { schemaHash: A })]);
    await client.invoke("s1", {}, { schemaHash: A });
    assert.equal(fake.lists, 1);
    fake.dropAll({ s1: B });
    await new Promise((r) => setTimeout(r, 20));
    const e: unknown = await client.invoke("s1", {}, { schemaHash: A }).catch((x: unknown) => x);
    assert.ok(e instanceof SchemaChangedError, String(e));
    assert.equal(e.code, "SCHEMA_CHANGED");
    assert.equal(e.message, `skill "s1" changed on the server: generated against ${A}, server has ${B}`);
    const gone: unknown = await client.invoke("s2", {}, { schemaHash: A }).catch((x: unknown) => x);
    assert.ok(gone instanceof SchemaChangedError);
    assert.deepEqual(gone.details, { skill: "s2", expected: A, actual: null });
    assert.equal(fake.lists, 2, "fetched again on the new connection only");
    assert.deepEqual((await client.invoke("s1", {})).output, { ok: true }, "without schemaHash nothing is checked");
    client.close();
    await fake.close();
  });

  it("a line that is not JSON ends the connection with PROTOCOL_ERROR for the calls in flight", async () => {
    const fake = new FakeServer({}, (req, socket) => {
      if (req.method !== "skills.invoke") return false;
      socket.write("this is not json\n");
      return true;
    });
    await fake.listen();
    const client = new Client({ socket: fake.path });
    await assert.rejects(client.invoke("x", {}), ProtocolError);
    await fake.close();
    await assert.rejects(client.invoke("x", {}), ConnectionLostError);
    client.close();
  });

  it("canonical JSON sorts keys at every level, without whitespace", () => {
    assert.equal(canonicalJson({ b: [{ d: 1, c: "x" }], a: null }), '{"a":null,"b":[{"c":"x","d":1}]}');
  });
});
