"""The words every layer speaks: who said a message (``Role``), how much it matters (``Importance``), how it
reaches the model (``Fidelity``), and the int8 codes the array arithmetic uses for them. The ground floor of
``core``: it imports nothing of the package, so every other module, ``turns`` and ``types`` alike, can."""

from __future__ import annotations

from enum import Enum
from typing import Literal, get_args

Role = Literal["system", "user", "assistant", "tool"]  # who said a message: the one list of roles
ROLES: tuple[Role, ...] = get_args(Role)


class Importance(str, Enum):
    """How much a message matters, as the paper defines it."""

    CRITICAL = "CRITICAL"
    RELEVANT = "RELEVANT"
    TRIVIAL = "TRIVIAL"


class Fidelity(str, Enum):
    """How a message reaches the model (its fidelity); ``DROPPED`` means it did not reach it at all."""

    FULL = "full"
    COMPRESSED = "compressed"
    PLACEHOLDER = "placeholder"
    DROPPED = "dropped"


# The array codes of the classes and fidelities: scoring and packing work on int8 arrays, one row per
# message, and turn codes back into the enums only for what a caller reads.
IMPORTANCES: tuple[Importance, ...] = (Importance.CRITICAL, Importance.RELEVANT, Importance.TRIVIAL)
IMPORTANCE_NAMES: tuple[str, ...] = tuple(i.value for i in IMPORTANCES)  # "CRITICAL", "RELEVANT", "TRIVIAL"
CRITICAL, RELEVANT, TRIVIAL = 0, 1, 2
FIDELITIES: tuple[Fidelity, ...] = (Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER, Fidelity.DROPPED)
FULL, COMPRESSED, PLACEHOLDER, DROPPED = 0, 1, 2, 3


def importance_code(importance: Importance) -> int:
    return IMPORTANCES.index(importance)
