/**
 * The rollout options of invoke and stream (`routingKey`, `version`) against a real serve whose
 * skill `greet` has a candidate (version 2, 10% of the traffic): they reach the server, and the
 * result says which version answered.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { Client, InvokeResult, ProtocolError, SkillNotFoundError, StreamEvent } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree } from "./helpers";

const NAME = { name: "Ada" };
const NO_VERSION_3 = 'skill "greet" has no version 3 (versions: 1, 2)';

/** `greet` at `version`; `how` changes its prompt (and description). */
function greet(version: number, how: string): string {
  return `id: greet
version: ${version}
description: Greet someone${how}.
template_type: LLM_JSON_GENERATION
model: gpt-4o-mini
input_schema: { type: object, required: [name], properties: { name: { type: string } } }
output_schema:
  type: object
  required: [greeting]
  additionalProperties: false
  properties: { greeting: { type: string } }
prompt: { system: Greet the person${how}., user: "{{input.name}}" }
`;
}

/** Which version answered, and on which arm. */
function answeredBy(result: InvokeResult): [number | null, string | null] {
  return [result.skillVersion, result.arm];
}

/** Streams to the end; returns the result (the last item). */
async function streamed(client: Client, options: { routingKey?: string; version?: number }): Promise<InvokeResult> {
  const items: Array<StreamEvent | InvokeResult> = [];
  for await (const item of client.stream("greet", NAME, options)) items.push(item);
  const result = items.pop() as InvokeResult;
  assert.ok(!("method" in result), "the last item is the result");
  return result;
}

describe("rollout options", () => {
  let tree: Tree;
  let server: Server;
  let client: Client;

  before(async () => {
    tree = makeTree(0);
    const dir = path.join(tree.skills, "greet");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "skill.yaml"), greet(1, "") + "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
    fs.writeFileSync(path.join(dir, "candidate.yaml"), greet(2, " warmly"));
    server = await Server.start(tree, { args: ["--state-dir", path.join(tree.dir, "state")] });
    client = new Client({ socket: tree.socket });
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
  });

  it("version pins the version that answers", async () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(answeredBy(await client.invoke("greet", NAME, { version: 2 })), [2, "candidate"]);
      assert.deepEqual(answeredBy(await client.invoke("greet", NAME, { version: 1, timeoutMs: 10_000 })), [1, "stable"]);
    }
    assert.deepEqual(answeredBy(await client.invoke("greet", NAME, { version: 2, routingKey: "k" })), [2, "candidate"]);
    assert.deepEqual(answeredBy(await streamed(client, { version: 2 })), [2, "candidate"]);
    assert.deepEqual(answeredBy(await streamed(client, { version: 1 })), [1, "stable"]);
  });

  it("a version the skill does not have rejects with the server's SKILL_NOT_FOUND", async () => {
    const error: unknown = await client.invoke("greet", NAME, { version: 3 }).catch((e: unknown) => e);
    assert.ok(error instanceof SkillNotFoundError, String(error));
    assert.equal(error.code, "SKILL_NOT_FOUND");
    assert.equal(error.message, NO_VERSION_3);
    const fromStream: unknown = await streamed(client, { version: 3 }).catch((e: unknown) => e);
    assert.ok(fromStream instanceof SkillNotFoundError, String(fromStream));
    assert.equal(fromStream.message, NO_VERSION_3);
  });

  it("bad values reject with the server's Invalid params", async () => {
    const version: unknown = await client.invoke("greet", NAME, { version: 0 }).catch((e: unknown) => e);
    assert.ok(version instanceof ProtocolError, String(version));
    assert.equal(version.details.jsonrpc_code, -32602);
    assert.equal(version.message, "Invalid params: /options/version: expected a version number (an integer from 1)");
    const key: unknown = await client.invoke("greet", NAME, { routingKey: "" }).catch((e: unknown) => e);
    assert.ok(key instanceof ProtocolError, String(key));
    assert.equal(key.message, "Invalid params: /options/routing_key: expected a string of 1 to 1024 characters");
  });

  it("a routing key keeps its arm", async () => {
    // The first key the rollout sends to each arm (about 1 in 10 goes to the candidate).
    const keys = new Map<string, [string, number | null]>();
    for (let n = 0; n < 200 && keys.size < 2; n++) {
      const result = await client.invoke("greet", NAME, { routingKey: `user-${n}` });
      assert.ok(result.arm !== null);
      if (!keys.has(result.arm)) keys.set(result.arm, [`user-${n}`, result.skillVersion]);
    }
    assert.deepEqual(keys.get("stable")?.[1], 1);
    assert.deepEqual(keys.get("candidate")?.[1], 2);
    for (const [arm, [key, version]] of keys) {
      // Were the key not sent, 5 calls in a row on the candidate would be a 1 in 100,000 chance.
      for (let i = 0; i < 5; i++) {
        assert.deepEqual(answeredBy(await client.invoke("greet", NAME, { routingKey: key })), [version, arm]);
      }
      assert.deepEqual(answeredBy(await streamed(client, { routingKey: key })), [version, arm]);
    }
  });
});
