"""Typed exceptions: one class per skillrunner error code."""

from __future__ import annotations

from typing import Any

__all__ = [
    "SkillrunnerError",
    "InputInvalidError",
    "SkillNotFoundError",
    "MaxRetriesExceededError",
    "TruncatedError",
    "RefusedError",
    "ContentFilteredError",
    "ProviderError",
    "ProviderUnavailableError",
    "SkillTimeoutError",
    "HandlerFailedError",
    "JudgeError",
    "SkillCancelledError",
    "ConfigInvalidError",
    "OverloadedError",
    "UnauthorizedError",
    "BudgetExceededError",
    "InternalError",
    "ConnectionLostError",
    "SchemaChangedError",
    "ProtocolError",
    "ReviewFailedError",
    "error_class",
]


class SkillrunnerError(Exception):
    """A failed call: the server's error object, or a client-side failure.

    Attributes:
        code: the error code, e.g. ``"INPUT_INVALID"`` (design.md §6.1 codes, plus the
            client-side ``CONNECTION_LOST``, ``SCHEMA_CHANGED`` and ``PROTOCOL_ERROR``).
        message: the human-readable message.
        attempts: every attempt the server made (empty when it made none).
        details: extra data: ``errors`` (JSON pointers and messages),
            ``retry_after_ms``, ``jsonrpc_code`` and the server's ``details``.
    """

    code: str = "UNKNOWN"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        attempts: list[dict[str, Any]] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        """Build the error; ``code`` overrides the class's own (for unknown codes)."""
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.attempts: list[dict[str, Any]] = attempts if attempts is not None else []
        self.details: dict[str, Any] = details if details is not None else {}

    def __str__(self) -> str:
        """``CODE: message``."""
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        """The class, code and message."""
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InputInvalidError(SkillrunnerError):
    """The input does not match the skill's input schema (``details["errors"]``)."""

    code = "INPUT_INVALID"


class SkillNotFoundError(SkillrunnerError):
    """No skill with that id is loaded."""

    code = "SKILL_NOT_FOUND"


class MaxRetriesExceededError(SkillrunnerError):
    """The answer still broke the output schema after the validation retries."""

    code = "MAX_RETRIES_EXCEEDED"


class TruncatedError(SkillrunnerError):
    """The model's answer was cut off at its output token limit."""

    code = "TRUNCATED"


class RefusedError(SkillrunnerError):
    """The model refused to answer."""

    code = "REFUSED"


class ContentFilteredError(SkillrunnerError):
    """The provider's content filter stopped the answer."""

    code = "CONTENT_FILTERED"


class ProviderError(SkillrunnerError):
    """The provider answered with a permanent error."""

    code = "PROVIDER_ERROR"


class ProviderUnavailableError(SkillrunnerError):
    """The provider kept failing until the transient retry budget was spent."""

    code = "PROVIDER_UNAVAILABLE"


class SkillTimeoutError(SkillrunnerError):
    """The deadline passed (on the server, or on the client after ``$/cancel``)."""

    code = "TIMEOUT"


class HandlerFailedError(SkillrunnerError):
    """A handler skill's program failed (``details``: exit_status, stderr_tail)."""

    code = "HANDLER_FAILED"


class JudgeError(SkillrunnerError):
    """The review gate's judge gave no usable verdict."""

    code = "JUDGE_ERROR"


class SkillCancelledError(SkillrunnerError):
    """The invocation was cancelled (``$/cancel``, or the server draining)."""

    code = "CANCELLED"


class ConfigInvalidError(SkillrunnerError):
    """The skill, rubric or config did not load (or a reload was refused)."""

    code = "CONFIG_INVALID"


class OverloadedError(SkillrunnerError):
    """The server refused the request; ``details["retry_after_ms"]`` hints when to retry."""

    code = "OVERLOADED"


class UnauthorizedError(SkillrunnerError):
    """The TCP listener needs a (correct) token."""

    code = "UNAUTHORIZED"


class BudgetExceededError(SkillrunnerError):
    """A cost or token budget was spent."""

    code = "BUDGET_EXCEEDED"


class InternalError(SkillrunnerError):
    """The server failed in a way no other code fits (a file or database it could not use)."""

    code = "INTERNAL"


class ConnectionLostError(SkillrunnerError):
    """The connection dropped (or could not be made); in-flight calls are never re-sent."""

    code = "CONNECTION_LOST"


class SchemaChangedError(SkillrunnerError):
    """The server's skill schemas differ from the ones the caller was generated against."""

    code = "SCHEMA_CHANGED"


class ProtocolError(SkillrunnerError):
    """A JSON-RPC level error (``details["jsonrpc_code"]``) or a malformed answer."""

    code = "PROTOCOL_ERROR"


class ReviewFailedError(SkillrunnerError):
    """The skill's review gate failed its answer; the server answered all the same.

    Raised by the generated stubs (and ``InvokeResult.raise_for_review``) unless they are called
    with ``allow_review_failure=True``. Attributes beyond the base class's: ``output`` (the
    answer the review failed), ``review`` (its verdict: ``pass``, ``issues``,
    ``suggested_fixes``, ``criteria_results``) and ``metrics``.
    """

    code = "REVIEW_FAILED"

    def __init__(
        self,
        message: str,
        *,
        output: Any,
        review: dict[str, Any],
        attempts: list[dict[str, Any]] | None = None,
        metrics: dict[str, Any] | None = None,
    ) -> None:
        """Build the error from the invocation's result."""
        super().__init__(message, attempts=attempts)
        self.output = output
        self.review = review
        self.metrics: dict[str, Any] = metrics if metrics is not None else {}


_BY_CODE: dict[str, type[SkillrunnerError]] = {
    cls.code: cls
    for cls in (
        InputInvalidError, SkillNotFoundError, MaxRetriesExceededError, TruncatedError,
        RefusedError, ContentFilteredError, ProviderError, ProviderUnavailableError,
        SkillTimeoutError, HandlerFailedError, JudgeError, SkillCancelledError,
        ConfigInvalidError, OverloadedError, UnauthorizedError, BudgetExceededError,
        InternalError, ConnectionLostError, SchemaChangedError, ProtocolError,
    )
}


def error_class(code: str) -> type[SkillrunnerError]:
    """Return the exception class for ``code`` (the base class for an unknown code)."""
    return _BY_CODE.get(code, SkillrunnerError)
