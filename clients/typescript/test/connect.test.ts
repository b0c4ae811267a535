/**
 * Reaching a host name: every address it resolves to is tried. A serve on 127.0.0.1 alone, reached as
 * a name that resolves to ::1 first (as `localhost` does on a stock Debian, where Node 18 connected to
 * ::1 only and was refused).
 */
import assert from "node:assert/strict";
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from "node:dns";
import { after, before, describe, it } from "node:test";

import { Client } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree } from "./helpers";

const WORDS = { text: "a b a", top: 1 };
const WORD_STATS = { words: 3, lines: 1, characters: 5, top_words: [{ word: "a", count: 2 }] };

/** A resolver that knows one name, `skillrunner.test`: ::1 first, then 127.0.0.1. Records each question. */
function ipv6FirstLookup(asked: string[]) {
  const addresses: LookupAddress[] = [
    { address: "::1", family: 6 },
    { address: "127.0.0.1", family: 4 },
  ];
  return (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    asked.push(`${hostname}${options.all ? " (all)" : ""}`);
    if (hostname !== "skillrunner.test") {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "");
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

describe("connecting to a host name", () => {
  let tree: Tree;
  let server: Server;
  const clients: Client[] = [];

  before(async () => {
    tree = makeTree(0);
    server = await Server.start(tree, { tcp: true, noSocket: true });
  });
  after(async () => {
    for (const client of clients) client.close();
    await server.stop();
    removeTree(tree);
  });

  it("tries each address the name resolves to: ::1 is refused, 127.0.0.1 answers", async () => {
    const asked: string[] = [];
    const client = new Client({ host: "skillrunner.test", port: server.port, lookup: ipv6FirstLookup(asked) });
    clients.push(client);
    const result = await client.invoke("word_stats", WORDS, { timeoutMs: 10_000 });
    assert.deepEqual(result.output, WORD_STATS);
    assert.deepEqual(asked, ["skillrunner.test (all)"]);
  });

  it("names the host and port when no address answers", async () => {
    const client = new Client({ host: "skillrunner.test", port: 1, lookup: ipv6FirstLookup([]), connectTimeoutMs: 5_000 });
    clients.push(client);
    const error: unknown = await client.health().then(
      () => assert.fail("the call succeeded"),
      (e: unknown) => e,
    );
    assert.match(String(error), /cannot connect to skillrunner\.test:1: /);
  });
});
