/** Client.stream: a streamed invocation's events, then its result, from a real serve. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client, InputInvalidError, InvokeResult, ProtocolError, StreamEvent } from "skillrunner-client";
import { servedTree } from "./helpers";

describe("stream", () => {
  const served = servedTree();

  it("yields skills.partial events, then the result", async () => {
    const client = new Client({ socket: served.tree.socket });
    const items: Array<StreamEvent | InvokeResult> = [];
    for await (const item of client.stream("triage_ticket", { subject: "Cannot log in", body: "help" }, { timeoutMs: 10_000 })) {
      items.push(item);
    }
    client.close();
    const result = items.pop() as InvokeResult;
    assert.ok(!("method" in result), "the last item is the result");
    assert.ok(items.length >= 1);
    for (const event of items as StreamEvent[]) {
      assert.equal(event.method, "skills.partial");
      assert.deepEqual(Object.keys(event.params).sort(), ["attempt", "complete", "id", "value"]);
    }
    const last = (items[items.length - 1] as StreamEvent).params;
    assert.deepEqual(last.value, result.output);
    assert.equal((last.complete as string[]).at(-1), "");
  });

  it("handler skills yield only the result; errors reject as invoke's", async () => {
    const client = new Client({ socket: served.tree.socket });
    const items: unknown[] = [];
    for await (const item of client.stream("word_stats", { text: "a b a", top: 1 })) items.push(item);
    assert.equal(items.length, 1);
    assert.equal((items[0] as InvokeResult<{ words: number }>).output.words, 3);
    await assert.rejects(async () => {
      for await (const item of client.stream("triage_ticket", { subject: "" })) items.push(item);
    }, InputInvalidError);
    client.close();
  });

  it("partialIntervalMs goes to the server as options.partial_interval_ms", async () => {
    const client = new Client({ socket: served.tree.socket });
    const items: unknown[] = [];
    for await (const item of client.stream("triage_ticket", { subject: "x", body: "y" }, { partialIntervalMs: 0 })) items.push(item);
    assert.ok(items.length >= 2, "partials, then the result");
    const error: unknown = await (async () => {
      for await (const item of client.stream("triage_ticket", { subject: "x", body: "y" }, { partialIntervalMs: 10_001 })) items.push(item);
    })().catch((e: unknown) => e);
    assert.ok(error instanceof ProtocolError, String(error));
    assert.deepEqual((error.details.errors as Array<{ path: string }>)[0].path, "/options/partial_interval_ms");
    client.close();
  });
});
