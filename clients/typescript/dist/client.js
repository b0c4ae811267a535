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
exports.Client = void 0;
exports.raiseForReview = raiseForReview;
const tls = __importStar(require("node:tls"));
const connection_1 = require("./connection");
const errors_1 = require("./errors");
const DEFAULT_RETRY_AFTER_MS = 100;
/** A client for one server; safe to share: all calls pipeline over one connection. */
class Client {
    endpoint;
    token;
    connectTimeoutMs;
    graceMs;
    maxOverloadedRetries;
    maxLineBytes;
    secureContext;
    conn;
    connecting;
    nextId = 1;
    closed = false;
    /** Takes `{socket}` or `{host, port, token?, tls?}`; nothing is connected until the first call. */
    constructor(options) {
        this.endpoint = endpointOf(options);
        this.secureContext = secureContextOf(options);
        this.token = options.token;
        this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
        this.graceMs = options.timeoutGraceMs ?? 1_000;
        this.maxOverloadedRetries = options.maxOverloadedRetries ?? 5;
        this.maxLineBytes = options.maxLineBytes ?? 1 << 20;
    }
    /**
     * Invokes a skill and resolves with its result; rejects with a
     * SkillrunnerError subclass (InputInvalidError, SkillTimeoutError, ...).
     * OVERLOADED is retried after `retry_after_ms` while that fits the deadline
     * (without one: at most `maxOverloadedRetries` times).
     */
    async invoke(skill, input, options = {}) {
        checkTimeout(options.timeoutMs);
        const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
        for (let retries = 0;; retries++) {
            try {
                return await this.invokeOnce(skill, input, options, deadline);
            }
            catch (error) {
                const wait = this.overloadedWait(error, retries, deadline);
                if (wait === undefined)
                    throw withRetries(error, retries);
                await sleep(wait, options.signal);
            }
        }
    }
    /**
     * Invokes a skill with `"stream": true`: yields each StreamEvent as it
     * arrives, then the InvokeResult (tell them apart by `"method" in item`).
     * Errors reject as from `invoke` (no OVERLOADED retry: events may have been
     * shown). Leaving the loop early sends `$/cancel`.
     */
    async *stream(skill, input, options = {}) {
        checkTimeout(options.timeoutMs);
        const ctl = { signal: options.signal, timeoutMs: options.timeoutMs };
        const streamOptions = { stream: true };
        if (options.partialIntervalMs !== undefined)
            streamOptions.partial_interval_ms = options.partialIntervalMs;
        if (options.timeoutMs !== undefined) {
            ctl.giveUpAt = Date.now() + options.timeoutMs + this.graceMs;
            streamOptions.timeout_ms = options.timeoutMs;
        }
        addRollout(streamOptions, options);
        const conn = await this.connection(ctl);
        const events = [];
        let wake;
        let outcome;
        const id = this.nextId;
        const answer = this.send(conn, "skills.invoke", { skill, input, options: streamOptions }, ctl, true, (event) => {
            events.push(event);
            wake?.();
        });
        answer.then((value) => ((outcome = { ok: true, value }), wake?.()), (error) => ((outcome = { ok: false, error }), wake?.()));
        try {
            for (;;) {
                while (events.length > 0)
                    yield events.shift();
                if (outcome)
                    break;
                await new Promise((resolve) => (wake = resolve));
                wake = undefined;
            }
            if (!outcome.ok)
                throw outcome.error;
            yield toInvokeResult(outcome.value);
        }
        finally {
            if (!outcome)
                conn.cancel(id);
        }
    }
    /** The server's `health` answer (status, in_flight, connections, limits, ...). */
    health(options = {}) {
        return this.call("health", undefined, options);
    }
    /** `skills.list`: one summary per loaded skill (`id`, `version`, `schema_hash`, ...). */
    list(options = {}) {
        return this.call("skills.list", undefined, options);
    }
    /** `skills.describe`: the summary plus `input_schema`, `output_schema`, rubric and descriptor. */
    describe(skill, options = {}) {
        return this.call("skills.describe", { skill }, options);
    }
    /** `skills.reload`: swaps in a freshly loaded tree (or rejects, keeping the old one). */
    reload(options = {}) {
        return this.call("skills.reload", undefined, options);
    }
    /** Sends any JSON-RPC method (e.g. `metrics`) and resolves with its `result`. */
    async call(method, params, options = {}) {
        const ctl = { ...options, giveUpAt: options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs };
        const conn = await this.connection(ctl);
        return this.send(conn, method, params, ctl, false);
    }
    /** Closes the connection; in-flight calls reject with CONNECTION_LOST and later calls are refused. */
    close() {
        this.closed = true;
        this.conn?.close();
        this.conn = undefined;
    }
    /** One `skills.invoke` request (after the schema check when asked for). */
    async invokeOnce(skill, input, options, deadline) {
        const ctl = { signal: options.signal, timeoutMs: options.timeoutMs };
        if (deadline !== undefined)
            ctl.giveUpAt = deadline + this.graceMs;
        const conn = await this.connection(ctl);
        if (options.schemaHash !== undefined)
            await this.checkSchema(conn, skill, { schemaHash: options.schemaHash, version: options.skillVersion }, ctl);
        const params = { skill, input };
        const invokeOptions = {};
        if (deadline !== undefined)
            invokeOptions.timeout_ms = Math.max(1, Math.round(deadline - Date.now()));
        addRollout(invokeOptions, options);
        if (Object.keys(invokeOptions).length > 0)
            params.options = invokeOptions;
        return toInvokeResult(await this.send(conn, "skills.invoke", params, ctl, true));
    }
    /** How long to wait before retrying an OVERLOADED call, or undefined to give up (any other error too). */
    overloadedWait(error, retries, deadline) {
        if (!(error instanceof errors_1.OverloadedError))
            return undefined;
        const hint = error.details.retry_after_ms;
        const wait = typeof hint === "number" && hint >= 0 ? hint : DEFAULT_RETRY_AFTER_MS;
        if (deadline !== undefined)
            return Date.now() + wait < deadline ? wait : undefined;
        return retries < this.maxOverloadedRetries ? wait : undefined;
    }
    /** The open connection, opening one when there is none (concurrent callers share the attempt). */
    connection(ctl) {
        if (this.closed)
            return Promise.reject(new errors_1.ConnectionLostError("CONNECTION_LOST", "the client is closed"));
        if (this.conn?.isOpen)
            return Promise.resolve(this.conn);
        if (!this.connecting) {
            this.connecting = connection_1.Connection.open(this.endpoint, this.connectTimeoutMs, this.secureContext).then((conn) => {
                this.connecting = undefined;
                if (this.closed)
                    conn.close();
                else
                    this.conn = conn;
                return conn;
            }, (error) => {
                this.connecting = undefined;
                throw error;
            });
            this.connecting.catch(() => undefined);
        }
        return guard(this.connecting, ctl, () => undefined);
    }
    /**
     * Compares the skill in `skills.list` (fetched once per connection, then kept up to date by
     * `skills.changed`) with what the caller was generated against: the same hash passes, and so
     * does another hash at the same version when `expected.version` is given (a compatible change;
     * the server refuses a breaking one unless the version rises). Anything else, or a missing skill,
     * rejects with SCHEMA_CHANGED. A server that reports no hash is not checked.
     */
    async checkSchema(conn, skill, expected, ctl) {
        if (!conn.skills) {
            if (!conn.listing) {
                const listing = this.send(conn, "skills.list", undefined, { giveUpAt: Date.now() + this.connectTimeoutMs }, false);
                conn.listing = listing;
                void listing
                    .catch(() => undefined)
                    .finally(() => {
                    if (conn.listing === listing)
                        conn.listing = undefined;
                });
            }
            await guard(conn.listing, ctl, () => undefined);
            if (!conn.skills)
                throw new errors_1.ProtocolError("PROTOCOL_ERROR", "skills.list answered something other than a list");
        }
        const actual = conn.skills.get(skill);
        if (actual && (actual.schemaHash === expected.schemaHash || actual.schemaHash === ""))
            return;
        if (actual && expected.version !== undefined && actual.version === expected.version)
            return;
        throw schemaChanged(skill, expected, actual);
    }
    /** Writes one request on `conn` and waits for its answer within `ctl`. */
    send(conn, method, params, ctl, cancelOnStop, onEvent) {
        const id = this.nextId++;
        const request = { jsonrpc: "2.0", id, method };
        if (params !== undefined)
            request.params = params;
        if (this.token !== undefined)
            request.auth = this.token;
        const line = JSON.stringify(request);
        const bytes = Buffer.byteLength(line);
        if (bytes > this.maxLineBytes) {
            const details = { jsonrpc_code: -32600, line_bytes: bytes, max_line_bytes: this.maxLineBytes };
            return Promise.reject(new errors_1.ProtocolError("PROTOCOL_ERROR", `request of ${bytes} bytes exceeds the ${this.maxLineBytes}-byte line limit`, [], details));
        }
        if (ctl.signal?.aborted)
            return Promise.reject(cancelledError(ctl.signal));
        const stop = () => (cancelOnStop ? conn.cancel(id) : conn.forget(id));
        if (onEvent)
            conn.listen(id, onEvent);
        return guard(conn.request(id, line + "\n", method === "skills.list"), ctl, stop);
    }
}
exports.Client = Client;
/** Rejects a timeoutMs the server would refuse (it takes 1 to 86400000) as PROTOCOL_ERROR -32602. */
function checkTimeout(timeoutMs) {
    if (timeoutMs === undefined || (Number.isFinite(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 86_400_000))
        return;
    const message = "expected a number of milliseconds from 1 to 86400000";
    const details = { jsonrpc_code: -32602, errors: [{ path: "/options/timeout_ms", message }] };
    throw new errors_1.ProtocolError("PROTOCOL_ERROR", `Invalid params: timeoutMs: ${message}`, [], details);
}
/** Adds `routing_key` and `version` to the wire options, each when given (the server checks them). */
function addRollout(wire, options) {
    if (options.routingKey !== undefined)
        wire.routing_key = options.routingKey;
    if (options.version !== undefined)
        wire.version = options.version;
}
/** Checks the constructor options and returns the endpoint. */
function endpointOf(options) {
    if (options.socket !== undefined && options.host === undefined && options.port === undefined)
        return { socket: options.socket };
    if (options.socket === undefined && options.port !== undefined) {
        return { host: options.host ?? "127.0.0.1", port: options.port, lookup: options.lookup };
    }
    throw new TypeError("Client needs either {socket} or {host, port}");
}
/** The TLS settings of `options.tls` (undefined without); a TypeError for a bad mix, PEM that does not load throws here. */
function secureContextOf(options) {
    const given = options.tls;
    if (given === undefined)
        return undefined;
    if (options.socket !== undefined)
        throw new TypeError("Client: tls is for {host, port}, not a Unix socket");
    if ((given.cert === undefined) !== (given.key === undefined))
        throw new TypeError("Client: tls.cert and tls.key go together");
    return tls.createSecureContext({ ca: given.ca, cert: given.cert, key: given.key, minVersion: "TLSv1.2" });
}
/**
 * Waits for `work`, but rejects with TIMEOUT at `ctl.giveUpAt` or CANCELLED when
 * `ctl.signal` aborts, calling `stop` first (which sends `$/cancel` for an invoke).
 */
function guard(work, ctl, stop) {
    if (ctl.signal?.aborted) {
        stop();
        return Promise.reject(cancelledError(ctl.signal));
    }
    if (ctl.giveUpAt === undefined && ctl.signal === undefined)
        return work;
    return new Promise((resolve, reject) => {
        let timer;
        const done = () => {
            if (timer !== undefined)
                clearTimeout(timer);
            ctl.signal?.removeEventListener("abort", onAbort);
        };
        const onAbort = () => {
            done();
            stop();
            reject(cancelledError(ctl.signal));
        };
        if (ctl.giveUpAt !== undefined) {
            timer = setTimeout(() => {
                done();
                stop();
                reject(timeoutError(ctl));
            }, Math.max(0, ctl.giveUpAt - Date.now()));
        }
        ctl.signal?.addEventListener("abort", onAbort, { once: true });
        work.then((value) => (done(), resolve(value)), (error) => (done(), reject(error)));
    });
}
/** The client-side TIMEOUT, raised after `$/cancel` was sent. */
function timeoutError(ctl) {
    const what = ctl.timeoutMs === undefined ? "the call" : `the ${ctl.timeoutMs} ms deadline`;
    return new errors_1.SkillTimeoutError("TIMEOUT", `no answer within ${what}; the client gave up (and sent $/cancel for an invocation)`, [], {
        client_side: true,
        timeout_ms: ctl.timeoutMs ?? null,
    });
}
/** The client-side CANCELLED of an aborted signal. */
function cancelledError(signal) {
    const reason = signal?.reason;
    const why = reason instanceof Error ? reason.message : reason === undefined ? "" : String(reason);
    return new errors_1.SkillCancelledError("CANCELLED", why ? `cancelled: ${why}` : "cancelled by the caller", [], { client_side: true });
}
/** Resolves after `ms`, or rejects with CANCELLED when the signal aborts first. */
function sleep(ms, signal) {
    return guard(new Promise((resolve) => setTimeout(resolve, ms)), { signal }, () => undefined);
}
/** Adds how many OVERLOADED retries were made to an OverloadedError's details. */
function withRetries(error, retries) {
    if (error instanceof errors_1.OverloadedError)
        error.details.retries = retries;
    return error;
}
/** Checks the shape of a `skills.invoke` result. */
function toInvokeResult(result) {
    if (!(0, errors_1.isObject)(result) || !("output" in result)) {
        throw new errors_1.ProtocolError("PROTOCOL_ERROR", "skills.invoke answered a result without output", [], { result });
    }
    return {
        skill: typeof result.skill === "string" ? result.skill : "",
        output: result.output,
        review: (0, errors_1.isObject)(result.review) ? result.review : null,
        reviewPassed: (0, errors_1.isObject)(result.review) ? result.review.pass !== false : null,
        attempts: Array.isArray(result.attempts) ? result.attempts : [],
        metrics: (0, errors_1.isObject)(result.metrics) ? result.metrics : {},
        skillVersion: typeof result.skill_version === "number" ? result.skill_version : null,
        arm: result.arm === "stable" || result.arm === "candidate" ? result.arm : null,
    };
}
/** The SCHEMA_CHANGED error for a skill the server no longer has as the caller expects. */
function schemaChanged(skill, expected, actual) {
    const details = { skill, expected: expected.schemaHash, actual: actual?.schemaHash ?? null };
    if (actual === undefined || expected.version === undefined) {
        const has = actual === undefined ? "no such skill" : actual.schemaHash;
        return new errors_1.SchemaChangedError("SCHEMA_CHANGED", `skill "${skill}" changed on the server: generated against ${expected.schemaHash}, server has ${has}`, [], details);
    }
    details.expected_version = expected.version;
    details.actual_version = actual.version ?? null;
    return new errors_1.SchemaChangedError("SCHEMA_CHANGED", `skill "${skill}" changed on the server in a way that breaks this caller: generated against version ${expected.version} (${expected.schemaHash}), server has version ${actual.version ?? "none"} (${actual.schemaHash}); regenerate the stubs`, [], details);
}
/** Throws ReviewFailedError when `result`'s review gate failed its answer; returns otherwise. */
function raiseForReview(result) {
    if (result.review === null || result.reviewPassed !== false)
        return;
    const issues = Array.isArray(result.review.issues) ? result.review.issues.filter((issue) => issue).map(String) : [];
    let message = `the review gate of skill ${result.skill} failed its answer`;
    if (issues.length > 0)
        message += `: ${issues.join("; ")}`;
    throw new errors_1.ReviewFailedError(message, result.output, result.review, result.attempts);
}
