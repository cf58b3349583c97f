"""The one error hierarchy. Every error afm-local raises on purpose is an ``AFMError``; its message
names the fix where there is one, so the CLI prints it as one line and the server maps the class,
never the text, to an HTTP status.

``InvalidInput`` and ``BudgetTooSmall`` also derive from ``ValueError`` so that callers who caught
``ValueError`` before the hierarchy existed keep working.
"""

from __future__ import annotations


class AFMError(Exception):
    """Base class of every error afm-local raises on purpose."""


class InvalidInput(AFMError, ValueError):
    """The caller gave something afm-local cannot use: an unknown role, a non-positive budget, ...

    ``param`` names the field at fault when one is known (``messages[3].tool_call_id``): the proxies
    answer in their API's own error shape, which carries it."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class AttachmentTooLarge(InvalidInput):
    """An image or file over a configured limit (bytes, pixels, pages, attachments a message)."""


class UnsupportedAttachment(InvalidInput):
    """Bytes that are no image, PDF or UTF-8 text, whatever the part or the file name claims."""


class BudgetTooSmall(InvalidInput):
    """The budget cannot hold the preamble, the query and the constraints that must be sent whole."""

    def __init__(self, budget: int, minimum: int, what: str = "every CRITICAL message") -> None:
        super().__init__(
            f"budget of {budget} tokens cannot hold the preamble, the query and {what} at full "
            f"fidelity; the minimum budget is {minimum} tokens"
        )
        self.budget = budget
        self.minimum = minimum
        self.what = what


class ModelError(AFMError, RuntimeError):
    """A model file is missing, corrupt or cannot be installed; the message names the fix."""


class StoreError(AFMError, RuntimeError):
    """The session store cannot be used (a newer schema, a corrupt, deleted or read-only file)."""


class StoreUnavailable(StoreError):
    """The store cannot take writes right now (lost, locked, read-only); nothing was acknowledged."""


class StoreFull(StoreUnavailable):
    """The disk (or the database's quota) is full; nothing was acknowledged."""


class UnknownSession(AFMError, KeyError):
    """No session with that id (or the id is not a valid session id)."""


class QuotaExceeded(AFMError):
    """A tenant's quota (sessions, messages or bytes stored) would be exceeded; nothing was written."""


def missing_extra(exc: ImportError, *packages: str) -> bool:
    """Whether ``exc`` says one of ``packages`` (an optional extra's) is not installed, rather than that
    something inside them failed to import."""
    return (exc.name or "").split(".")[0] in packages
