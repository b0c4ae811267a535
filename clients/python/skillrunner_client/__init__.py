"""Python client for skillrunner's socket server (newline-delimited JSON-RPC 2.0).

``Client`` is synchronous and thread-safe; ``AsyncClient`` is for asyncio. Both keep
one connection, pipeline every call on it, and raise a ``SkillrunnerError``
subclass per error code::

    from skillrunner_client import Client

    with Client(socket="/tmp/skillrunner.sock") as client:
        result = client.invoke("word_stats", {"text": "a b a"}, timeout_ms=5000)
        print(result.output["words"])
"""

from ._async import AsyncClient
from ._errors import (
    BudgetExceededError,
    ConfigInvalidError,
    ConnectionLostError,
    ContentFilteredError,
    HandlerFailedError,
    InputInvalidError,
    InternalError,
    JudgeError,
    MaxRetriesExceededError,
    OverloadedError,
    ProtocolError,
    ProviderError,
    ProviderUnavailableError,
    RefusedError,
    ReviewFailedError,
    SchemaChangedError,
    SkillCancelledError,
    SkillNotFoundError,
    SkillrunnerError,
    SkillTimeoutError,
    TruncatedError,
    UnauthorizedError,
    error_class,
)
from ._protocol import InvokeResult
from ._sync import Client

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (tool.setuptools.dynamic)

__all__ = [
    "AsyncClient",
    "BudgetExceededError",
    "Client",
    "ConfigInvalidError",
    "ConnectionLostError",
    "ContentFilteredError",
    "HandlerFailedError",
    "InputInvalidError",
    "InternalError",
    "InvokeResult",
    "JudgeError",
    "MaxRetriesExceededError",
    "OverloadedError",
    "ProtocolError",
    "ProviderError",
    "ProviderUnavailableError",
    "RefusedError",
    "ReviewFailedError",
    "SchemaChangedError",
    "SkillCancelledError",
    "SkillNotFoundError",
    "SkillTimeoutError",
    "SkillrunnerError",
    "TruncatedError",
    "UnauthorizedError",
    "error_class",
]
