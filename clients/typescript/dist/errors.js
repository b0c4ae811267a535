"use strict";
/**
 * Errors raised by the client: `SkillrunnerError` carries the error code (the
 * server's `data.code`, or a client-side code), the message, the attempts the
 * server made and details; one subclass per code lets callers `instanceof`.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.ERROR_CLASSES = exports.ReviewFailedError = exports.ProtocolError = exports.SchemaChangedError = exports.ConnectionLostError = exports.InternalError = exports.BudgetExceededError = exports.UnauthorizedError = exports.OverloadedError = exports.ConfigInvalidError = exports.SkillCancelledError = exports.JudgeError = exports.HandlerFailedError = exports.SkillTimeoutError = exports.ProviderUnavailableError = exports.ProviderError = exports.ContentFilteredError = exports.RefusedError = exports.TruncatedError = exports.MaxRetriesExceededError = exports.SkillNotFoundError = exports.InputInvalidError = exports.SkillrunnerError = void 0;
exports.makeError = makeError;
exports.isObject = isObject;
exports.errorFromJsonRpc = errorFromJsonRpc;
/** Every error the client rejects with. */
class SkillrunnerError extends Error {
    /** The code, e.g. "INPUT_INVALID", "TIMEOUT" or "CONNECTION_LOST". */
    code;
    /** The attempts the server made before it gave up (empty when none). */
    attempts;
    /**
     * `data.details` of the server's error, plus `errors` (the `{path, message}`
     * list of INPUT_INVALID and validation failures) and `retry_after_ms` where
     * present; client-side codes put their own fields here.
     */
    details;
    /** Prefer `makeError`, which picks the subclass for the code. */
    constructor(code, message, attempts = [], details = {}) {
        super(message);
        this.name = new.target.name;
        this.code = code;
        this.attempts = attempts;
        this.details = details;
    }
}
exports.SkillrunnerError = SkillrunnerError;
/** The input does not match the skill's input schema (`details.errors` has the pointers). */
class InputInvalidError extends SkillrunnerError {
}
exports.InputInvalidError = InputInvalidError;
/** No skill with that id is loaded. */
class SkillNotFoundError extends SkillrunnerError {
}
exports.SkillNotFoundError = SkillNotFoundError;
/** The answers stayed invalid after the retry budget. */
class MaxRetriesExceededError extends SkillrunnerError {
}
exports.MaxRetriesExceededError = MaxRetriesExceededError;
/** The model stopped at its output limit. */
class TruncatedError extends SkillrunnerError {
}
exports.TruncatedError = TruncatedError;
/** The model refused. */
class RefusedError extends SkillrunnerError {
}
exports.RefusedError = RefusedError;
/** The provider's content filter stopped the answer. */
class ContentFilteredError extends SkillrunnerError {
}
exports.ContentFilteredError = ContentFilteredError;
/** The provider answered a permanent error. */
class ProviderError extends SkillrunnerError {
}
exports.ProviderError = ProviderError;
/** The provider stayed unavailable after the transient budget. */
class ProviderUnavailableError extends SkillrunnerError {
}
exports.ProviderUnavailableError = ProviderUnavailableError;
/** The deadline passed (the server's, or the client's after it sent `$/cancel`). */
class SkillTimeoutError extends SkillrunnerError {
}
exports.SkillTimeoutError = SkillTimeoutError;
/** A handler skill's program failed (`details.exit_status`, `details.stderr_tail`). */
class HandlerFailedError extends SkillrunnerError {
}
exports.HandlerFailedError = HandlerFailedError;
/** A review skill's judge failed. */
class JudgeError extends SkillrunnerError {
}
exports.JudgeError = JudgeError;
/** The call was cancelled (by an AbortSignal, or by the server while draining). */
class SkillCancelledError extends SkillrunnerError {
}
exports.SkillCancelledError = SkillCancelledError;
/** The skill or the server's config did not load. */
class ConfigInvalidError extends SkillrunnerError {
}
exports.ConfigInvalidError = ConfigInvalidError;
/** The server refused the call for load (`details.retry_after_ms`), after the client's retries. */
class OverloadedError extends SkillrunnerError {
}
exports.OverloadedError = OverloadedError;
/** The listener needs a token, or the token is wrong. */
class UnauthorizedError extends SkillrunnerError {
}
exports.UnauthorizedError = UnauthorizedError;
/** A tenant's budget is spent. */
class BudgetExceededError extends SkillrunnerError {
}
exports.BudgetExceededError = BudgetExceededError;
/** The server failed in a way no other code fits (a file or database it could not use). */
class InternalError extends SkillrunnerError {
}
exports.InternalError = InternalError;
/** Client-side: the connection dropped (or never opened) while the call was in flight; it is not re-sent. */
class ConnectionLostError extends SkillrunnerError {
}
exports.ConnectionLostError = ConnectionLostError;
/** Client-side: the skill's schema hash on the server differs from the expected one. */
class SchemaChangedError extends SkillrunnerError {
}
exports.SchemaChangedError = SchemaChangedError;
/** Client-side: a JSON-RPC protocol error (`details.jsonrpc_code`) or a malformed answer. */
class ProtocolError extends SkillrunnerError {
}
exports.ProtocolError = ProtocolError;
/**
 * Client-side: the skill's review gate failed its answer, which the server returned all the same.
 * The generated stubs (and `raiseForReview`) reject with it unless called with
 * `allowReviewFailure: true`.
 */
class ReviewFailedError extends SkillrunnerError {
    /** The answer the review failed. */
    output;
    /** The review's verdict: `pass`, `issues`, `suggested_fixes`, `criteria_results`. */
    review;
    constructor(message, output, review, attempts = []) {
        super("REVIEW_FAILED", message, attempts);
        this.output = output;
        this.review = review;
    }
}
exports.ReviewFailedError = ReviewFailedError;
/** The subclass for each code; an unknown code gets the base class. */
exports.ERROR_CLASSES = Object.freeze({
    INPUT_INVALID: InputInvalidError,
    SKILL_NOT_FOUND: SkillNotFoundError,
    MAX_RETRIES_EXCEEDED: MaxRetriesExceededError,
    TRUNCATED: TruncatedError,
    REFUSED: RefusedError,
    CONTENT_FILTERED: ContentFilteredError,
    PROVIDER_ERROR: ProviderError,
    PROVIDER_UNAVAILABLE: ProviderUnavailableError,
    TIMEOUT: SkillTimeoutError,
    HANDLER_FAILED: HandlerFailedError,
    JUDGE_ERROR: JudgeError,
    CANCELLED: SkillCancelledError,
    CONFIG_INVALID: ConfigInvalidError,
    OVERLOADED: OverloadedError,
    UNAUTHORIZED: UnauthorizedError,
    BUDGET_EXCEEDED: BudgetExceededError,
    INTERNAL: InternalError,
    CONNECTION_LOST: ConnectionLostError,
    SCHEMA_CHANGED: SchemaChangedError,
    PROTOCOL_ERROR: ProtocolError,
});
/** Builds the error of the right subclass for a code. */
function makeError(code, message, attempts = [], details = {}) {
    const Cls = Object.prototype.hasOwnProperty.call(exports.ERROR_CLASSES, code) ? exports.ERROR_CLASSES[code] : undefined;
    return Cls ? new Cls(code, message, attempts, details) : new SkillrunnerError(code, message, attempts, details);
}
/** JSON-RPC codes that mean the request itself was wrong (parse, not a request, method, params). */
const PROTOCOL_CODES = new Set([-32700, -32600, -32601, -32602]);
/** The server-only JSON-RPC codes, for an error that lacks `data.code`. */
const SERVER_ONLY_CODES = { [-32000]: "OVERLOADED", [-32001]: "UNAUTHORIZED" };
/** True for a plain JSON object (not null, not an array). */
function isObject(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
/** The members of an error's `data` that are not details. */
const ENVELOPE_KEYS = new Set(["code", "message", "details", "attempts", "metrics"]);
/**
 * Maps a JSON-RPC `error` member to a SkillrunnerError. The server's `data` is
 * the inner error object `{code, message, errors?, details?, attempts, metrics}`.
 */
function errorFromJsonRpc(error) {
    if (!isObject(error) || typeof error.code !== "number") {
        return new ProtocolError("PROTOCOL_ERROR", "malformed JSON-RPC error member", [], { error });
    }
    const message = typeof error.message === "string" ? error.message : "unknown error";
    const data = isObject(error.data) ? error.data : {};
    const code = typeof data.code === "string" ? data.code : SERVER_ONLY_CODES[error.code];
    if (PROTOCOL_CODES.has(error.code) || code === undefined) {
        const details = { ...data, jsonrpc_code: error.code };
        return new ProtocolError("PROTOCOL_ERROR", message, [], details);
    }
    // data.details merged with the other members (errors, retry_after_ms, a refused reload's diagnostics), as the Python client does.
    const details = isObject(data.details) ? { ...data.details } : {};
    for (const [key, value] of Object.entries(data)) {
        if (!ENVELOPE_KEYS.has(key))
            details[key] = value;
    }
    const attempts = Array.isArray(data.attempts) ? data.attempts.filter(isObject) : [];
    const text = typeof data.message === "string" ? data.message : message;
    return makeError(code, text, attempts, details);
}
