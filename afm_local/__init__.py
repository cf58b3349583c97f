"""afm-local: Adaptive Focus Memory for long LLM conversations, on-device.

The facade: ``FocusManager`` rebuilds a chat history to fit a token budget so that binding
constraints survive; ``AFMConfig`` holds every coefficient; ``local_manager()`` is a manager over the
on-device models (built once, shared), ``local_components()`` builds them afresh. The layers below
(``core`` → ``text`` → ``local`` / ``engine`` → ``server``) are described in README.md.
"""

from ._version import __version__
from .core.config import AFMConfig
from .core.errors import AFMError, BudgetTooSmall, InvalidInput, ModelError, StoreError
from .core.protocols import Components
from .core.turns import Turn
from .core.types import Context, ContextItem, Message
from .core.vocabulary import Fidelity, Importance
from .defaults import local_manager
from .engine import ArtifactCache, FocusManager
from .local import local_components
from .media import file_part

__all__ = [
    "AFMConfig",
    "AFMError",
    "ArtifactCache",
    "BudgetTooSmall",
    "Components",
    "Context",
    "ContextItem",
    "Fidelity",
    "FocusManager",
    "Importance",
    "InvalidInput",
    "Message",
    "ModelError",
    "StoreError",
    "Turn",
    "__version__",
    "file_part",
    "local_components",
    "local_manager",
]
