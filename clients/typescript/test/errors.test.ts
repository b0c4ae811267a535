/** Each error code the server can produce, seen as its typed error. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, it } from "node:test";

import * as sr from "skillrunner-client";
import { Server, Tree, makeTree, removeTree } from "./helpers";

const TICKET = { subject: "Cannot log in", body: "Since this morning." };

describe("typed errors from a real serve", () => {
  let tree: Tree;
  let server: Server;
  let client: sr.Client;

  before(async () => {
    tree = makeTree(100, { broken: true });
    server = await Server.start(tree, { allowBroken: true });
    client = new sr.Client({ socket: tree.socket });
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
  });

  /** Invokes and returns the rejection, asserting its class and code. */
  async function rejection<E extends sr.SkillrunnerError>(cls: new (...a: never[]) => E, code: string, skill: string, input: unknown, options: sr.InvokeOptions = {}): Promise<E> {
    const error: unknown = await client.invoke(skill, input, options).then(
      () => assert.fail(`${skill} succeeded`),
      (e: unknown) => e,
    );
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    assert.ok(error instanceof sr.SkillrunnerError);
    assert.equal(error.code, code);
    assert.equal(error.name, cls.name);
    return error;
  }

  it("succeeds with the success shape", async () => {
    const result = await client.invoke<{ priority: number; category: string }>("triage_ticket", TICKET, { timeoutMs: 10_000 });
    assert.equal(result.skill, "triage_ticket");
    assert.ok(result.output.priority >= 1 && result.output.priority <= 4);
    assert.equal(result.review, null);
    assert.ok(result.attempts.length >= 1);
    assert.equal(typeof result.metrics.duration_ms, "number");
  });

  it("INPUT_INVALID carries every JSON pointer in details.errors", async () => {
    const e = await rejection(sr.InputInvalidError, "INPUT_INVALID", "triage_ticket", { subject: "", extra: 1 });
    const paths = (e.details.errors as Array<{ path: string }>).map((x) => x.path).sort();
    assert.deepEqual(paths, ["/body", "/extra", "/subject"]);
    assert.match(e.message, /input_schema/);
  });

  it("SKILL_NOT_FOUND", async () => {
    const e = await rejection(sr.SkillNotFoundError, "SKILL_NOT_FOUND", "no_such_skill", {});
    assert.match(e.message, /no_such_skill/);
  });

  it("TIMEOUT from the server's deadline", async () => {
    const e = await rejection(sr.SkillTimeoutError, "TIMEOUT", "triage_ticket", TICKET, { timeoutMs: 30 });
    assert.notEqual(e.details.client_side, true, "the server's TIMEOUT comes before the client's grace");
  });

  it("MAX_RETRIES_EXCEEDED with the attempts", async () => {
    const e = await rejection(sr.MaxRetriesExceededError, "MAX_RETRIES_EXCEEDED", "t_invalid_json", { text: "x" });
    assert.ok(e.attempts.length >= 2, "every attempt is reported");
    assert.ok(Array.isArray(e.details.errors));
  });

  it("TRUNCATED, REFUSED, CONTENT_FILTERED", async () => {
    await rejection(sr.TruncatedError, "TRUNCATED", "t_truncate", { text: "x" });
    await rejection(sr.RefusedError, "REFUSED", "t_refusal", { text: "x" });
    await rejection(sr.ContentFilteredError, "CONTENT_FILTERED", "t_filter", { text: "x" });
  });

  it("PROVIDER_UNAVAILABLE with http_status in details", async () => {
    const e = await rejection(sr.ProviderUnavailableError, "PROVIDER_UNAVAILABLE", "t_unavailable", { text: "x" });
    assert.equal(e.details.http_status, 503);
  });

  it("HANDLER_FAILED with the exit status", async () => {
    const e = await rejection(sr.HandlerFailedError, "HANDLER_FAILED", "h_fail", {});
    assert.equal(e.details.exit_status, 3);
  });

  it("CONFIG_INVALID for a skill that did not load (--allow-broken)", async () => {
    await rejection(sr.ConfigInvalidError, "CONFIG_INVALID", "broken", {});
  });

  it("PROTOCOL_ERROR for bad params and an unknown method, with details.jsonrpc_code", async () => {
    const p: unknown = await client.call("skills.invoke", { skill: "triage_ticket", input: TICKET, options: { timeout_ms: 0 } }).catch((x: unknown) => x);
    assert.ok(p instanceof sr.ProtocolError);
    assert.equal(p.details.jsonrpc_code, -32602);
    assert.deepEqual((p.details.errors as Array<{ path: string }>).map((x) => x.path), ["/options/timeout_ms"]);
    const e = await rejection(sr.ProtocolError, "PROTOCOL_ERROR", "triage_ticket", TICKET, { timeoutMs: 0 });
    assert.equal(e.details.jsonrpc_code, -32602, "checked before sending");
    const m: unknown = await client.call("skills.explode").catch((x: unknown) => x);
    assert.ok(m instanceof sr.ProtocolError);
    assert.equal(m.details.jsonrpc_code, -32601);
  });

  it("PROTOCOL_ERROR before sending a line longer than the server's limit", async () => {
    const e = await rejection(sr.ProtocolError, "PROTOCOL_ERROR", "triage_ticket", { subject: "x", body: "y".repeat(1 << 20) });
    assert.equal(e.details.jsonrpc_code, -32600);
    assert.equal((await client.health()).status, "degraded", "the connection is still usable");
  });

  it("an idle connection does not keep Node running (no close() needed to exit)", async () => {
    const code = `const { Client } = require(${JSON.stringify(require.resolve("skillrunner-client"))});
      new Client({ socket: ${JSON.stringify(tree.socket)} }).invoke("word_stats", { text: "a b" }).then((r) => console.log(r.output.words));`;
    const child = spawnSync(process.execPath, ["-e", code], { encoding: "utf8", timeout: 10_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), "2");
  });

  it("health, list, describe and reload", async () => {
    const health = await client.health();
    assert.equal(health.connections, 1);
    const ids = (await client.list()).map((s) => s.id);
    assert.ok(ids.includes("triage_ticket"));
    const d = await client.describe("triage_ticket");
    assert.equal((d.input_schema as { type: string }).type, "object");
    await assert.rejects(client.describe("no_such_skill"), sr.SkillNotFoundError);
    const reload: unknown = await client.reload().catch((x: unknown) => x);
    assert.ok(reload instanceof sr.SkillrunnerError || (reload as { ok: boolean }).ok !== undefined);
  });
});

describe("UNAUTHORIZED on a TCP listener with SKILLRUNNER_TOKEN", () => {
  let tree: Tree;
  let server: Server;
  const token = "t0k-" + Math.random().toString(36).slice(2);

  before(async () => {
    tree = makeTree(0);
    server = await Server.start(tree, { tcp: true, noSocket: true, env: { SKILLRUNNER_TOKEN: token } });
  });
  after(async () => {
    await server.stop();
    removeTree(tree);
  });

  it("a wrong or missing token rejects UnauthorizedError; the right one works", async () => {
    for (const bad of [{ token: "wrong" }, {}]) {
      const client = new sr.Client({ host: "127.0.0.1", port: server.port, ...bad });
      const e: unknown = await client.invoke("word_stats", { text: "a b" }).catch((x: unknown) => x);
      assert.ok(e instanceof sr.UnauthorizedError, String(e));
      assert.equal(e.code, "UNAUTHORIZED");
      assert.ok(!e.message.includes(token));
      client.close();
    }
    const good = new sr.Client({ host: "127.0.0.1", port: server.port, token });
    const r = await good.invoke<{ words: number }>("word_stats", { text: "a b a" });
    assert.equal(r.output.words, 3);
    good.close();
    assert.ok(!server.log.join("\n").includes(token), "the token never reaches the log");
  });
});

describe("error mapping", () => {
  it("maps unknown codes to the base class and malformed errors to PROTOCOL_ERROR", () => {
    const e = sr.errorFromJsonRpc({ code: -32003, message: "m", data: { code: "NEW_CODE", message: "new", attempts: [{ n: 1 }], details: { a: 1 }, retry_after_ms: 5 } });
    assert.equal(e.constructor, sr.SkillrunnerError);
    assert.equal(e.code, "NEW_CODE");
    assert.deepEqual(e.details, { a: 1, retry_after_ms: 5 });
    assert.deepEqual(e.attempts, [{ n: 1 }]);
    assert.ok(sr.errorFromJsonRpc("nonsense") instanceof sr.ProtocolError);
    assert.ok(sr.errorFromJsonRpc({ code: -32000, message: "busy" }) instanceof sr.OverloadedError);
    assert.ok(sr.makeError("BUDGET_EXCEEDED", "x") instanceof sr.BudgetExceededError);
    const internal = sr.errorFromJsonRpc({ code: -32603, message: "m", data: { code: "INTERNAL", message: "m" } });
    assert.ok(internal instanceof sr.InternalError);
    assert.equal(internal.code, "INTERNAL");
  });
});
