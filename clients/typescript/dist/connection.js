"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.Connection = void 0;
exports.stampsOf = stampsOf;
exports.describeEndpoint = describeEndpoint;
/**
 * One socket to the server: writes request lines, splits the answers on
 * newlines and settles the pending call with the matching id. When the socket
 * closes, every pending call is rejected with CONNECTION_LOST (never re-sent).
 */
const net = __importStar(require("node:net"));
const tls = __importStar(require("node:tls"));
const errors_1 = require("./errors");
/** Maps a `skills.list` result to skill id -> stamp; undefined when it is not a list. */
function stampsOf(list) {
    if (!Array.isArray(list))
        return undefined;
    const stamps = new Map();
    for (const entry of list) {
        if (!(0, errors_1.isObject)(entry) || typeof entry.id !== "string")
            continue;
        stamps.set(entry.id, {
            version: typeof entry.version === "number" ? entry.version : undefined,
            schemaHash: typeof entry.schema_hash === "string" ? entry.schema_hash : "",
        });
    }
    return stamps;
}
/** Describes an endpoint for messages. */
function describeEndpoint(endpoint) {
    return "socket" in endpoint ? endpoint.socket : `${endpoint.host}:${endpoint.port}`;
}
/** A connected socket with its pending calls, keyed by JSON-RPC id. */
class Connection {
    socket;
    where;
    pending = new Map();
    listeners = new Map();
    buffer = "";
    closedError;
    /** What the server said, in an answer without an id, before it closed (plain text on a TLS port). */
    lastWords;
    /**
     * The last `skills.list` answered on this connection with every `skills.changed` after it
     * applied (kept as the lines arrive, so none is lost between the two); dropped with the connection.
     */
    skills;
    /** The `skills.list` a schema check is waiting for, shared by concurrent checks. */
    listing;
    listIds = new Set();
    constructor(socket, where) {
        this.socket = socket;
        this.where = where;
        socket.setEncoding("utf8");
        socket.setNoDelay(true);
        socket.unref(); // an idle connection does not keep Node running; a pending call does
        socket.on("data", (chunk) => this.onData(chunk));
        socket.on("error", (err) => this.fail(this.lostError(err.message)));
        socket.on("close", () => this.fail(this.lastWords === undefined
            ? this.lostError("the server closed the connection")
            : new errors_1.ConnectionLostError("CONNECTION_LOST", `connection to ${this.where} closed by the server: ${this.lastWords}`, [], {
                endpoint: this.where,
            })));
    }
    /**
     * Opens a connection; rejects with CONNECTION_LOST when the server cannot be reached. With
     * `secureContext` (a TCP endpoint) it speaks TLS: the handshake, in the connect timeout, must
     * verify the server's certificate and its name (`servername` for a host that is not an IP).
     */
    static open(endpoint, connectTimeoutMs, secureContext) {
        const where = describeEndpoint(endpoint);
        return new Promise((resolve, reject) => {
            let socket;
            let ready = "connect";
            // A host name is tried at each address it resolves to (Happy Eyeballs): Node 18 connects to
            // the first alone unless asked, and `localhost` resolves to ::1 first on a stock Debian while a
            // server may listen on 127.0.0.1 only.
            if ("socket" in endpoint)
                socket = net.createConnection(endpoint.socket);
            else if (secureContext === undefined) {
                socket = net.createConnection({ host: endpoint.host, port: endpoint.port, lookup: endpoint.lookup, autoSelectFamily: true });
            }
            else {
                const servername = net.isIP(endpoint.host) === 0 ? endpoint.host : undefined;
                // tls.connect hands its options to net's connect, autoSelectFamily included (not in its types).
                const options = {
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
            const onError = (err) => {
                clearTimeout(timer);
                // A certificate that does not verify (or does not name the host): node sets authorizationError.
                const unverified = socket instanceof tls.TLSSocket && socket.authorizationError !== undefined && socket.authorizationError !== null;
                const why = unverified ? `TLS certificate verification failed: ${err.message}` : err.message;
                reject(new errors_1.ConnectionLostError("CONNECTION_LOST", `cannot connect to ${where}: ${why}`, [], { endpoint: where, phase: "connect" }));
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
    get isOpen() {
        return this.closedError === undefined;
    }
    /** Number of calls waiting for an answer on this connection. */
    get inFlight() {
        return this.pending.size;
    }
    /**
     * Writes one request line and returns its answer's `result` (or rejects with its error).
     * `listsSkills`: a `skills.list` whose answer becomes `skills`.
     */
    request(id, line, listsSkills = false) {
        if (this.closedError)
            return Promise.reject(this.closedError);
        return new Promise((resolve, reject) => {
            this.pending.set(id, { resolve, reject });
            if (listsSkills)
                this.listIds.add(id);
            this.socket.ref();
            this.socket.write(line);
        });
    }
    /** Stops waiting for an id (its answer, if it comes, is dropped) and writes `$/cancel` for it. */
    cancel(id) {
        this.forget(id);
        if (this.closedError)
            return;
        this.socket.write(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel", params: { id } }) + "\n");
    }
    /** Hands the notifications whose `params.id` is `id` to `listener` until the id is forgotten. */
    listen(id, listener) {
        this.listeners.set(id, listener);
    }
    /** Stops waiting for an id without telling the server. */
    forget(id) {
        this.pending.delete(id);
        this.listeners.delete(id);
        this.listIds.delete(id);
        if (this.pending.size === 0)
            this.socket.unref();
    }
    /** Closes the socket; pending calls reject with CONNECTION_LOST. */
    close(reason = "the client closed the connection") {
        this.fail(this.lostError(reason));
        this.socket.destroy();
    }
    /** The CONNECTION_LOST error for this connection. */
    lostError(why) {
        return new errors_1.ConnectionLostError("CONNECTION_LOST", `connection to ${this.where} lost: ${why}`, [], { endpoint: this.where });
    }
    /** Rejects every pending call with `error` (the first failure wins). */
    fail(error) {
        if (this.closedError)
            return;
        this.closedError = error;
        const calls = [...this.pending.values()];
        this.pending.clear();
        for (const call of calls)
            call.reject(error);
        this.socket.destroy();
    }
    /** Splits the received text into lines; the unfinished tail waits for the next chunk. */
    onData(chunk) {
        const text = this.buffer + chunk;
        let start = 0;
        let newline = text.indexOf("\n");
        while (newline >= 0 && !this.closedError) {
            const line = text.slice(start, newline);
            start = newline + 1;
            if (line.trim() !== "")
                this.onLine(line);
            newline = text.indexOf("\n", start);
        }
        this.buffer = text.slice(start);
    }
    /** Settles the call an answer line belongs to; a line that is not JSON ends the connection. */
    onLine(line) {
        let answer;
        try {
            answer = JSON.parse(line);
        }
        catch {
            this.fail(new errors_1.ProtocolError("PROTOCOL_ERROR", `the server sent a line that is not JSON: ${line.slice(0, 200)}`));
            return;
        }
        for (const one of Array.isArray(answer) ? answer : [answer])
            this.settle(one);
    }
    /** Resolves or rejects the pending call with the answer's id. */
    settle(answer) {
        if ((0, errors_1.isObject)(answer) && !("id" in answer) && typeof answer.method === "string" && (0, errors_1.isObject)(answer.params)) {
            if (answer.method === "skills.changed")
                return this.applyChanged(answer.params);
            const about = answer.params.id;
            if (typeof about === "number")
                this.listeners.get(about)?.({ method: answer.method, params: answer.params });
            return;
        }
        if ((0, errors_1.isObject)(answer) && answer.id === null && (0, errors_1.isObject)(answer.error) && typeof answer.error.message === "string") {
            this.lastWords = answer.error.message; // nobody to tell now: said if the server closes
            return;
        }
        if (!(0, errors_1.isObject)(answer) || typeof answer.id !== "number")
            return; // id null: nobody to tell
        const call = this.pending.get(answer.id);
        if (!call)
            return; // cancelled or timed out: the late answer is dropped
        if (this.listIds.has(answer.id) && "result" in answer)
            this.skills = stampsOf(answer.result) ?? this.skills;
        this.forget(answer.id);
        if ("error" in answer)
            call.reject((0, errors_1.errorFromJsonRpc)(answer.error));
        else if ("result" in answer)
            call.resolve(answer.result);
        else
            call.reject(new errors_1.ProtocolError("PROTOCOL_ERROR", "an answer with neither result nor error", [], { answer }));
    }
    /** A `skills.changed` ({skill, version, schema_hash, breaking}): the kept `skills.list` follows it. */
    applyChanged(params) {
        if (!this.skills || typeof params.skill !== "string")
            return;
        const before = this.skills.get(params.skill);
        this.skills.set(params.skill, {
            version: typeof params.version === "number" ? params.version : before?.version,
            schemaHash: typeof params.schema_hash === "string" ? params.schema_hash : (before?.schemaHash ?? ""),
        });
    }
}
exports.Connection = Connection;
