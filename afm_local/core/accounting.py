"""Chat cost accounting: the one definition of what a packed context costs in tokens.

OpenAI counts a chat as each message's content plus a fixed overhead per message (3 tokens of framing and
the role's one token, ``AFMConfig.per_message_overhead``), a tool message's ``tool_call_id`` and each
tool call's id, name and arguments, and primes the reply with 3 more tokens (OpenAI's cookbook count).
The structured memory sends every history item as one bullet line inside one system message, so there an
item costs its text plus a bullet and a newline. Everything here is arithmetic over an injected
``TokenCounter``; the engine, the baselines, the server's "tokens saved" header and the benchmarks all
count through these functions. One function, ``chat_cost``, counts a message whatever it carries: text,
tool calls, and image parts, which the caller prices (a rendered part does not say what it costs:
``core.forms.image_price`` looks it up among the parts the engine made and priced with ``core.imagecost``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .config import AFMConfig, Render
from .protocols import TokenCounter
from .render import structured_skeleton
from .turns import Turn, chat_message

STRUCTURED_LINE_OVERHEAD = 2  # a bullet and a newline per item in the structured memory
TOOL_CALL_OVERHEAD = 3  # a tool call beyond its id, name and arguments (its framing: OpenAI publishes no rule)
ImagePrice = Callable[[Mapping[str, Any]], int]  # what the target model charges for one OpenAI image part


def item_overhead(render: Render, config: AFMConfig) -> int:
    """Tokens a history item costs beyond its text: a chat message's overhead, or a bullet line's."""
    return config.per_message_overhead if render == "chat" else STRUCTURED_LINE_OVERHEAD


def message_cost(counter: TokenCounter, text: str, config: AFMConfig) -> int:
    """One chat message: its content plus the per-message overhead."""
    return counter.count(text) + config.per_message_overhead


def fixed_cost(
    counter: TokenCounter, query: str, preamble: str | None, render: Render, language: str, config: AFMConfig
) -> int:
    """What every context costs before any history: the query, the reply priming, and the preamble
    (chat) or the structured memory's system message with its headings and no items."""
    fixed = message_cost(counter, query, config) + config.reply_overhead
    if render == "chat":
        return fixed + (message_cost(counter, preamble, config) if preamble else 0)
    return fixed + message_cost(counter, structured_skeleton(preamble, language), config)


def chat_cost(
    counter: TokenCounter, message: Mapping[str, Any], config: AFMConfig, image_price: ImagePrice | None = None
) -> int:
    """One chat message as sent: its text (a string, or its text parts), the name and arguments of each tool
    call it makes, its image parts at ``image_price`` (what the target model charges for each; none given:
    a message with image parts is refused), the overhead."""
    content = message.get("content") or ""
    cost = message_cost(counter, content_text(content), config)
    if not isinstance(content, str):
        images = [part for part in content if part.get("type") == "image_url"]
        if images and image_price is None:
            raise ValueError("a message with image parts is counted with an image_price (core.forms.ImagePart)")
        cost += sum(image_price(part) for part in images) if image_price is not None else 0
    if message.get("tool_call_id"):
        cost += counter.count(message["tool_call_id"])
    calls = message.get("tool_calls") or ()
    return cost + sum(
        counter.count(c["id"])
        + counter.count(c["function"]["name"])
        + counter.count(c["function"]["arguments"])
        + TOOL_CALL_OVERHEAD
        for c in calls
    )


def content_text(content: str | Sequence[Mapping[str, Any]]) -> str:
    """A message's text as counted: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def unit_tokens(counter: TokenCounter, turns: Iterable[Turn], config: AFMConfig) -> int:
    """A tool-call unit's token count in the history's columns: the chat cost of its API messages, less
    the one per-item overhead that packing adds to every history entry (so a chat context stays exact)."""
    return sum(chat_cost(counter, chat_message(t), config) for t in turns) - config.per_message_overhead


def sent_cost(
    counter: TokenCounter,
    messages: Iterable[Mapping[str, Any]],
    config: AFMConfig,
    image_price: ImagePrice | None = None,
) -> int:
    """The exact cost of a list of chat messages as sent, reply priming included (``chat_cost``)."""
    return sum(chat_cost(counter, m, config, image_price) for m in messages) + config.reply_overhead


def verbatim_cost(
    history_tokens: Iterable[int], counter: TokenCounter, query: str, preamble: str | None, config: AFMConfig
) -> int:
    """What sending the whole history verbatim (chat render) would cost: the "tokens saved" baseline."""
    total = sum(t + config.per_message_overhead for t in history_tokens)
    return total + fixed_cost(counter, query, preamble, "chat", "en", config)
