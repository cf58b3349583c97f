"""Turning packed forms into the messages that are sent: the chat history, or a structured memory.

The structured render follows the mission's prompt template: one system message that puts CRITICAL
items first, verbatim, with an instruction to treat them as binding, then RELEVANT context in its
packed form and the REST as one line each; the query follows as the last user turn. It is written in
the conversation's language (English or Russian).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .forms import ImagePart
from .protocols import TokenCounter
from .turns import Turn, chat_message
from .vocabulary import Fidelity, Importance, Role


@dataclass(frozen=True, slots=True)
class Headings:
    title: str
    critical: str
    relevant: str
    rest: str
    images: str


HEADINGS = {
    "en": Headings(
        title="## Conversation memory",
        critical=(
            "### CRITICAL: binding constraints from this conversation. Treat every item as a hard "
            "requirement: obey it in your answer, never contradict or drop it."
        ),
        relevant="### RELEVANT: earlier context, possibly condensed",
        rest="### REST: other turns, one line each",
        images="Images from the conversation memory, in the order it names them:",
    ),
    "ru": Headings(
        title="## Память разговора",
        critical=(
            "### КРИТИЧНО: обязательные условия из этого разговора. Считай каждый пункт жёстким "
            "требованием: соблюдай его в ответе, никогда не нарушай и не опускай."
        ),
        relevant="### ВАЖНО: предыдущий контекст, возможно в сокращении",
        rest="### ПРОЧЕЕ: остальные реплики, по строке на каждую",
        images="Изображения из памяти разговора, в том порядке, в каком она их называет:",
    ),
}


@dataclass(frozen=True, slots=True)
class Packed:
    """One history message in the form packing chose for it, with the image parts that form sends. A
    tool-call unit sent in words carries its API messages (``turns``); the chat render sends those, the
    structured render its ``text``."""

    role: Role
    importance: Importance
    fidelity: Fidelity
    text: str
    turns: tuple[Turn, ...] = ()
    images: tuple[ImagePart, ...] = ()
    index: int = -1  # its place in the history

    def content(self) -> str | list[dict[str, Any]]:
        """The text, or OpenAI content parts (the text first, then the images) when it sends images."""
        if not self.images:
            return self.text
        return [{"type": "text", "text": self.text}, *(image.to_openai() for image in self.images)]


def turn_line(index: int, role: str, label: str = "") -> str:
    """``[Turn N · role: label]``: how a message that is not sent in words is named."""
    return f"[Turn {index + 1} · {role}: {label}]" if label else f"[Turn {index + 1} · {role}]"


def range_line(first: int, last: int, label: str = "") -> str:
    """``[Turns A–B: label]``: how a run of messages that is not sent in words is named (0-based indices in,
    1-based turns out, ends included)."""
    turns = f"Turns {first + 1}–{last + 1}"
    return f"[{turns}: {label}]" if label else f"[{turns}]"


def reference_line(index: int, role: str) -> str:
    """The stub an older wording of a restated constraint becomes (the item's reason names the turn)."""
    return turn_line(index, role, "constraint, restated later")


def placeholder(index: int, role: str, topic: str, counter: TokenCounter, max_tokens: int) -> tuple[str, int]:
    """A message's placeholder line and its tokens: ``[Turn N · role: topic]`` within ``max_tokens``."""
    return fitted(lambda label: turn_line(index, role, label), topic, counter, max_tokens)


def range_placeholder(first: int, last: int, topic: str, counter: TokenCounter, max_tokens: int) -> tuple[str, int]:
    """A run's placeholder line and its tokens: ``[Turns A–B: topic]`` within ``max_tokens``."""
    return fitted(lambda label: range_line(first, last, label), topic, counter, max_tokens)


def fitted(line_of: Callable[[str], str], topic: str, counter: TokenCounter, max_tokens: int) -> tuple[str, int]:
    """The line ``line_of`` makes of the longest label that fits ``max_tokens``: the topic's key phrases
    (comma-separated) kept whole while they fit, then the first one word by word, then no label at all."""
    phrases = [p.strip() for p in topic.split(",") if p.strip()]
    labels = [", ".join(phrases[:k]) for k in range(len(phrases), 0, -1)]
    first = phrases[0].split() if phrases else []
    labels += [" ".join(first[:k]) for k in range(len(first) - 1, 0, -1)]
    for label in labels + [""]:
        line = line_of(label)
        tokens = counter.count(line)
        if tokens <= max_tokens:
            return line, tokens
    return line, tokens


def structured_skeleton(preamble: str | None, language: str) -> str:
    """The system message with every heading and no items: its cost is reserved before packing."""
    h = HEADINGS[language]
    parts = [preamble.strip()] if preamble else []
    parts += [h.title, h.critical, h.relevant, h.rest]
    return "\n\n".join(parts)


def render_chat(preamble: str | None, packed: list[Packed], query: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": preamble}] if preamble else []
    return messages + chat_messages(packed) + [{"role": "user", "content": query}]


def chat_messages(packed: list[Packed]) -> list[dict[str, Any]]:
    """Packed history as chat messages: a tool-call unit as its API messages, anything else as one message
    (the loop after the query is sent this way in either render: a tool result must follow its call)."""
    messages: list[dict[str, Any]] = []
    for p in packed:
        if p.turns:
            messages += [chat_message(t) for t in p.turns]
        elif p.fidelity is not Fidelity.DROPPED:
            messages.append({"role": p.role, "content": p.content()})
    return messages


def render_structured(preamble: str | None, packed: list[Packed], query: str, language: str) -> list[dict[str, Any]]:
    """One system message of blocks (an item with attachments lists them, with their text); the images its
    items send follow in one user message (a system message takes no images), then the query."""
    h = HEADINGS[language]
    sent = [p for p in packed if p.fidelity is not Fidelity.DROPPED]
    critical = [p for p in sent if p.importance is Importance.CRITICAL and p.fidelity is Fidelity.FULL]
    relevant = [p for p in sent if p not in critical and p.fidelity in (Fidelity.FULL, Fidelity.COMPRESSED)]
    rest = [p for p in sent if p not in critical and p not in relevant]
    blocks = [preamble.strip()] if preamble else []
    blocks.append(h.title)
    for heading, items, bullet in ((h.critical, critical, "- "), (h.relevant, relevant, "- "), (h.rest, rest, "")):
        if items:
            blocks.append(heading + "\n" + "\n".join(bullet + _one_line(p.text) for p in items))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "\n\n".join(blocks)}]
    images = [image.to_openai() for p in critical + relevant + rest for image in p.images]
    if images:
        messages.append({"role": "user", "content": [{"type": "text", "text": h.images}, *images]})
    return messages + [{"role": "user", "content": query}]


def _one_line(text: str) -> str:
    """Keep the text verbatim, indenting continuation lines so the bullet list stays readable."""
    return text.strip().replace("\n", "\n  ")
