"""afm-local: Adaptive Focus Memory for long LLM conversations, on-device.

``FocusManager`` rebuilds a chat history to fit a token budget so that binding constraints survive;
``AFMConfig`` holds every coefficient. See README.md.
"""

from .cache import ArtifactCache
from .components import Components, local_components
from .config import AFMConfig
from .manager import FocusManager
from .models import ModelError
from .packing import BudgetTooSmall
from .types import Context, ContextItem, Fidelity, Importance, Message

__all__ = [
    "AFMConfig",
    "ArtifactCache",
    "BudgetTooSmall",
    "Components",
    "Context",
    "ContextItem",
    "Fidelity",
    "FocusManager",
    "Importance",
    "Message",
    "ModelError",
    "local_components",
]
__version__ = "0.1.0"
