"""afm-local: Adaptive Focus Memory for long LLM conversations, on-device.

The facade: ``FocusManager`` rebuilds a chat history to fit a token budget so that binding
constraints survive; ``AFMConfig`` holds every coefficient; ``local_components()`` builds the
on-device models. The layers below (``core`` → ``text`` → ``local`` / ``engine`` → ``server``) are
described in README.md.
"""

from .core.config import AFMConfig
from .core.errors import AFMError, BudgetTooSmall, InvalidInput, ModelError, StoreError
from .core.protocols import Components
from .core.turns import Turn
from .core.types import Context, ContextItem, Fidelity, Importance, Message
from .engine import ArtifactCache, FocusManager, set_default_components
from .local import local_components
from ._version import __version__


def _default_components(config: AFMConfig) -> Components:
    """What ``FocusManager()`` loads when given no components: the local stack, with the background model
    that ``config.compressor_model`` names (none by default)."""
    return local_components(config, abstractive=True)


set_default_components(_default_components)

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
    "local_components",
]
