"""Importance tags a user writes at the start of a message: ``[!]``, ``[CRITICAL]``, ``[RELEVANT]``, ``[TRIVIAL]``.

A tag is the user's word and beats every classifier. It is removed from the text that is sent.
"""

from __future__ import annotations

import re

from .vocabulary import Importance

_TAG = re.compile(r"^\s*\[(!|critical|relevant|trivial)\]\s*", re.IGNORECASE)
_TAG_LABEL = {
    "!": Importance.CRITICAL,
    "critical": Importance.CRITICAL,
    "relevant": Importance.RELEVANT,
    "trivial": Importance.TRIVIAL,
}


def parse_tag(text: str) -> tuple[Importance | None, str]:
    """Split a leading tag from ``text``; return ``(importance or None, text without the tag)``."""
    match = _TAG.match(text)
    if match is None:
        return None, text
    return _TAG_LABEL[match.group(1).lower()], text[match.end() :]
