/**
 * One socket to the server: writes request lines, splits the answers on
 * newlines and settles the pending call with the matching id. When the socket
 * closes, every pending call is rejected with CONNECTION_LOST (never re-sent).
 */
import * as net from "node:net";
import * as tls from "node:tls";

import { ConnectionLostError, ProtocolError, SkillrunnerError, errorFromJsonRpc, isObject } from "./errors";

/** Where the server listens: a Unix socket path, or a TCP host and port. */
export type Endpoint = { socket: string } | { host: string; port: number; lookup?: net.LookupFunction };

/** A call waiting for its answer. */
interface Pending {
  resolve(result: unknown): void;
  reject(error: SkillrunnerError): void;
}

/** A notification about one request (`skills.partial`, `skills.reset`); `params.id` names the request. */
export interface Notification {
  method: string;
  params: Record<string, unknown>;
}

/** A skill as `skills.list` and `skills.changed` describe it: what the schema checks compare. */
export interface SkillStamp {
  /** The skill's version; undefined when the server reports none. */
  version: number | undefined;
  /** Its `schema_hash`; "" when the server reports none. */
  schemaHash: string;
}

/** Maps a `skills.list` result to skill id -> stamp; undefined when it is not a list. */
export function stampsOf(list: unknown): Map<string, SkillStamp> | undefined {
  if (!Array.isArray(list)) return undefined;
  const stamps = new Map<string, SkillStamp>();
  for (const entry of list) {
    if (!isObject(entry) || typeof entry.id !== "string") continue;
    stamps.set(entry.id, {
      version: typeof entry.version === "number" ? entry.version : undefined,
      schemaHash: typeof entry.schema_hash === "string" ? entry.schema_hash : "",
    });
  }
  return stamps;
}

/** Describes an endpoint for messages. */
export function describeEndpoint(endpoint: Endpoint): string {
  return "socket" in endpoint ? endpoint.socket : `${endpoint.host}:${endpoint.port}`;
}

/** A connected socket with its pending calls, keyed by JSON-RPC id. */
export class Connection {
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<number, (notification: Notification) => void>();
  private buffer = "";
  private closedError: SkillrunnerError | undefined;
  /** What the server said, in an answer without an id, before it closed (plain text on a TLS port). */
  private lastWords: string | undefined;
  /**
   * The last `skills.list` answered on this connection with every `skills.changed` after it
   * applied (kept as the lines arrive, so none is lost between the two); dropped with the connection.
   */
  skills: Map<string, SkillStamp> | undefined;
  /** The `skills.list` a schema check is waiting for, shared by concurrent checks. */
  listing: Promise<unknown> | undefined;
  private readonly listIds = new Set<number>();

  private constructor(
    private readonly socket: net.Socket,
    private readonly where: string,
  ) {
    socket.setEncoding("utf8");
    socket.setNoDelay(true);
    socket.unref(); // an idle connection does not keep Node running; a pending call does
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("error", (err: Error) => this.fail(this.lostError(err.message)));
    socket.on("close", () =>
      this.fail(
        this.lastWords === undefined
          ? this.lostError("the server closed the connection")
          : new ConnectionLostError("CONNECTION_LOST", `connection to ${this.where} closed by the server: ${this.lastWords}`, [], {
              endpoint: this.where,
            }),
      ),
    );
  }

  /**
   * Opens a connection; rejects with CONNECTION_LOST when the server cannot be reached. With
   * `secureContext` (a TCP endpoint) it speaks TLS: the handshake, in the connect timeout, must
   * verify the server's certificate and its name (`servername` for a host that is not an IP).
   */
  static open(endpoint: Endpoint, connectTimeoutMs: number, secureContext?: tls.SecureContext): Promise<Connection> {
    const where = describeEndpoint(endpoint);
    return new Promise((resolve, reject) => {
      let socket: net.Socket;
      let ready = "connect";
      // A host name is tried at each address it resolves to (Happy Eyeballs): Node 18 connects to
      // the first alone unless asked, and `localhost` resolves to ::1 first on a stock Debian while a
      // server may listen on 127.0.0.1 only.
      if ("socket" in endpoint) socket = net.createConnection(endpoint.socket);
      else if (secureContext === undefined) {
        socket = net.createConnection({ host: endpoint.host, port: endpoint.port, lookup: endpoint.lookup, autoSelectFamily: true });
      } else {
        const servername = net.isIP(endpoint.host) === 0 ? endpoint.host : undefined;
        // tls.connect hands its options to net's connect, autoSelectFamily included (not in its types).
        const options: tls.ConnectionOptions & { autoSelectFamily: boolean } = {
          host: endpoint.host,
          port: endpoint.port,
          lookup: endpoint.lookup,
          autoSelectFamily: true,
          secureContext,
          servername,
          rejectUnauthorized: true,
        };
        socket = tls.connect(options);
        ready = "secureConnect";
      }
      const timer = setTimeout(() => socket.destroy(new Error(`no connection after ${connectTimeoutMs} ms`)), connectTimeoutMs);
      const onError = (err: Error): void => {
        clearTimeout(timer);
        // A certificate that does not verify (or does not name the host): node sets authorizationError.
        const unverified = socket instanceof tls.TLSSocket && socket.authorizationError !== undefined && socket.authorizationError !== null;
        const why = unverified ? `TLS certificate verification failed: ${err.message}` : err.message;
        reject(new ConnectionLostError("CONNECTION_LOST", `cannot connect to ${where}: ${why}`, [], { endpoint: where, phase: "connect" }));
      };
      socket.once("error", onError);
      socket.once(ready, () => {
        clearTimeout(timer);
        socket.off("error", onError);
        resolve(new Connection(socket, where));
      });
    });
  }

  /** False once the socket has closed or failed. */
  get isOpen(): boolean {
    return this.closedError === undefined;
  }

  /** Number of calls waiting for an answer on this connection. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Writes one request line and returns its answer's `result` (or rejects with its error).
   * `listsSkills`: a `skills.list` whose answer becomes `skills`.
   */
  request(id: number, line: string, listsSkills = false): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (listsSkills) this.listIds.add(id);
      this.socket.ref();
      this.socket.write(line);
    });
  }

  /** Stops waiting for an id (its answer, if it comes, is dropped) and writes `$/cancel` for it. */
  cancel(id: number): void {
    this.forget(id);
    if (this.closedError) return;
    this.socket.write(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel", params: { id } }) + "\n");
  }

  /** Hands the notifications whose `params.id` is `id` to `listener` until the id is forgotten. */
  listen(id: number, listener: (notification: Notification) => void): void {
    this.listeners.set(id, listener);
  }

  /** Stops waiting for an id without telling the server. */
  forget(id: number): void {
    this.pending.delete(id);
    this.listeners.delete(id);
    this.listIds.delete(id);
    if (this.pending.size === 0) this.socket.unref();
  }

  /** Closes the socket; pending calls reject with CONNECTION_LOST. */
  close(reason = "the client closed the connection"): void {
    this.fail(this.lostError(reason));
    this.socket.destroy();
  }

  /** The CONNECTION_LOST error for this connection. */
  private lostError(why: string): ConnectionLostError {
    return new ConnectionLostError("CONNECTION_LOST", `connection to ${this.where} lost: ${why}`, [], { endpoint: this.where });
  }

  /** Rejects every pending call with `error` (the first failure wins). */
  private fail(error: SkillrunnerError): void {
    if (this.closedError) return;
    this.closedError = error;
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(error);
    this.socket.destroy();
  }

  /** Splits the received text into lines; the unfinished tail waits for the next chunk. */
  private onData(chunk: string): void {
    const text = this.buffer + chunk;
    let start = 0;
    let newline = text.indexOf("\n");
    while (newline >= 0 && !this.closedError) {
      const line = text.slice(start, newline);
      start = newline + 1;
      if (line.trim() !== "") this.onLine(line);
      newline = text.indexOf("\n", start);
    }
    this.buffer = text.slice(start);
  }

  /** Settles the call an answer line belongs to; a line that is not JSON ends the connection. */
  private onLine(line: string): void {
    let answer: unknown;
    try {
      answer = JSON.parse(line);
    } catch {
      this.fail(new ProtocolError("PROTOCOL_ERROR", `the server sent a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    for (const one of Array.isArray(answer) ? answer : [answer]) this.settle(one);
  }

  /** Resolves or rejects the pending call with the answer's id. */
  private settle(answer: unknown): void {
    if (isObject(answer) && !("id" in answer) && typeof answer.method === "string" && isObject(answer.params)) {
      if (answer.method === "skills.changed") return this.applyChanged(answer.params);
      const about = answer.params.id;
      if (typeof about === "number") this.listeners.get(about)?.({ method: answer.method, params: answer.params });
      return;
    }
    if (isObject(answer) && answer.id === null && isObject(answer.error) && typeof answer.error.message === "string") {
      this.lastWords = answer.error.message; // nobody to tell now: said if the server closes
      return;
    }
    if (!isObject(answer) || typeof answer.id !== "number") return; // id null: nobody to tell
    const call = this.pending.get(answer.id);
    if (!call) return; // cancelled or timed out: the late answer is dropped
    if (this.listIds.has(answer.id) && "result" in answer) this.skills = stampsOf(answer.result) ?? this.skills;
    this.forget(answer.id);
    if ("error" in answer) call.reject(errorFromJsonRpc(answer.error));
    else if ("result" in answer) call.resolve(answer.result);
    else call.reject(new ProtocolError("PROTOCOL_ERROR", "an answer with neither result nor error", [], { answer }));
  }

  /** A `skills.changed` ({skill, version, schema_hash, breaking}): the kept `skills.list` follows it. */
  private applyChanged(params: Record<string, unknown>): void {
    if (!this.skills || typeof params.skill !== "string") return;
    const before = this.skills.get(params.skill);
    this.skills.set(params.skill, {
      version: typeof params.version === "number" ? params.version : before?.version,
      schemaHash: typeof params.schema_hash === "string" ? params.schema_hash : (before?.schemaHash ?? ""),
    });
  }
}
