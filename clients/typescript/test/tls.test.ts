/**
 * The `tls` option against a real `skillrunner serve --tls-cert` (and `--tls-client-ca`), with
 * certificates made here by the openssl command line: a test CA, a server certificate it signs for
 * IP:127.0.0.1 and DNS:localhost, a client certificate "/O=Example/CN=billing", and another CA.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { Client, ConnectionLostError } from "skillrunner-client";
import { Server, Tree, makeTree, removeTree } from "./helpers";

const WORDS = { text: "a b a", top: 1 };
const WORD_STATS = { words: 3, lines: 1, characters: 5, top_words: [{ word: "a", count: 2 }] };

/** The test PKI's PEM files, by name. */
interface Certs {
  dir: string;
  ca: Buffer;
  otherCa: Buffer;
  clientCert: Buffer;
  clientKey: Buffer;
  serverCert: string;
  serverKey: string;
}

/** Writes the test PKI into a new temporary folder. */
function makeCerts(): Certs {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "srts-tls-"));
  const openssl = (...args: string[]): void => {
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  };
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=test CA", "-days", "2");
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.pem", "-subj", "/CN=another CA", "-days", "2");
  fs.writeFileSync(path.join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext");
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj", "/O=Example/CN=billing");
  openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.pem", "-days", "2");
  const read = (name: string): Buffer => fs.readFileSync(path.join(dir, name));
  return {
    dir,
    ca: read("ca.pem"),
    otherCa: read("other-ca.pem"),
    clientCert: read("client.pem"),
    clientKey: read("client.key"),
    serverCert: path.join(dir, "server.pem"),
    serverKey: path.join(dir, "server.key"),
  };
}

/** A PKI, a tree and `serve --listen 127.0.0.1:0 --tls-cert ...` for the enclosing describe block. */
function servedTls(mutual: boolean): { certs: Certs; tree: Tree; server: Server; clients: Client[] } {
  const served = { clients: [] } as unknown as { certs: Certs; tree: Tree; server: Server; clients: Client[] };
  before(async () => {
    served.certs = makeCerts();
    served.tree = makeTree(0);
    const args = ["--tls-cert", served.certs.serverCert, "--tls-key", served.certs.serverKey];
    if (mutual) {
      fs.appendFileSync(served.tree.config, 'tenants:\n  billing: { tls_subject: "CN=billing,O=Example" }\n');
      args.push("--tls-client-ca", path.join(served.certs.dir, "ca.pem"));
    }
    served.server = await Server.start(served.tree, { tcp: true, args });
  });
  after(async () => {
    for (const client of served.clients) client.close();
    await served.server.stop();
    removeTree(served.tree);
    fs.rmSync(served.certs.dir, { recursive: true, force: true });
  });
  return served;
}

/** The rejection of `work`, which must be a ConnectionLostError. */
async function connectionLost(work: Promise<unknown>): Promise<ConnectionLostError> {
  const error: unknown = await work.then(
    () => assert.fail("the call succeeded"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ConnectionLostError, String(error));
  assert.equal(error.code, "CONNECTION_LOST");
  return error;
}

describe("TLS", () => {
  const s = servedTls(false);
  const client = (host: string, tls: ConstructorParameters<typeof Client>[0]["tls"]): Client => {
    const made = new Client({ host, port: s.server.port, tls });
    s.clients.push(made);
    return made;
  };

  it("a TLS call completes: health, and the handler skill word_stats", async () => {
    const tlsClient = client("127.0.0.1", { ca: s.certs.ca });
    const health = (await tlsClient.health()) as { status: string; listeners: { tls: unknown } };
    assert.equal(health.status, "ok");
    assert.notEqual(health.listeners.tls, null);
    const result = await tlsClient.invoke("word_stats", WORDS, { timeoutMs: 10_000 });
    assert.deepEqual(result.output, WORD_STATS);
    assert.equal(result.metrics.mode, "handler");
  });

  it("checks the server's name: localhost (sent as servername), the CA as a PEM string", async () => {
    const result = await client("localhost", { ca: s.certs.ca.toString("utf8") }).invoke("word_stats", WORDS);
    assert.deepEqual(result.output, WORD_STATS);
  });

  it("a wrong CA fails CONNECTION_LOST naming the certificate verification", async () => {
    const error = await connectionLost(client("127.0.0.1", { ca: s.certs.otherCa }).health());
    assert.match(error.message, new RegExp(`^cannot connect to 127\\.0\\.0\\.1:${s.server.port}: TLS certificate verification failed: `));
    assert.deepEqual(error.details, { endpoint: `127.0.0.1:${s.server.port}`, phase: "connect" });
  });

  it("without ca the system's CAs do not trust the test CA", async () => {
    const error = await connectionLost(client("127.0.0.1", {}).health());
    assert.match(error.message, /TLS certificate verification failed/);
  });

  it("a client without tls is refused by the TLS listener", async () => {
    const plain = new Client({ host: "127.0.0.1", port: s.server.port, connectTimeoutMs: 5_000 });
    s.clients.push(plain);
    const error = await connectionLost(plain.health({ timeoutMs: 5_000 }));
    // The server says why before it closes (design.md §12.1), and the error carries its words.
    assert.equal(
      error.message,
      `connection to 127.0.0.1:${s.server.port} closed by the server: this listener requires TLS: connect with --tls / tls=True`,
    );
  });

  it("checks its options: tls is for TCP; cert and key go together", () => {
    assert.throws(() => new Client({ socket: s.tree.socket, tls: {} }), /not a Unix socket/);
    assert.throws(() => new Client({ host: "127.0.0.1", port: 1, tls: { cert: s.certs.clientCert } }), /tls\.cert and tls\.key go together/);
  });
});

describe("mutual TLS (serve --tls-client-ca)", () => {
  const s = servedTls(true);

  it("a client without a certificate fails CONNECTION_LOST (the server's alert)", async () => {
    const noCert = new Client({ host: "127.0.0.1", port: s.server.port, tls: { ca: s.certs.ca } });
    s.clients.push(noCert);
    const error = await connectionLost(noCert.health());
    assert.match(error.message, /certificate required/);
    await s.server.waitForLog((line) => line.includes("peer did not return a certificate"));
  });

  it("the billing certificate is served, as the tenant billing", async () => {
    const billing = new Client({ host: "localhost", port: s.server.port, tls: { ca: s.certs.ca, cert: s.certs.clientCert, key: s.certs.clientKey } });
    s.clients.push(billing);
    const before = s.server.invokeEvents().length;
    const result = await billing.invoke("word_stats", WORDS, { timeoutMs: 10_000 });
    assert.deepEqual(result.output, WORD_STATS);
    await s.server.waitForLog(() => s.server.invokeEvents().length > before);
    const events = s.server.invokeEvents().slice(before);
    assert.deepEqual(
      events.map((e) => [e.skill, e.tenant, e.outcome]),
      [["word_stats", "billing", "ok"]],
    );
  });
});
