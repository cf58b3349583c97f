"""An agent's request as it really arrives: one instruction (with a hard constraint), then a tool loop of
file reads and one large log dump, in each API's own shape; and each API's token count of a request,
written here independently of ``afm_local.core.accounting`` (tiktoken o200k_base straight from its cache
file, counted as OpenAI's cookbook counts a chat), so a test can hold the proxies to the budget.

The Anthropic and Responses counts apply the same per-message rule to their own shapes: neither API
publishes a tokenizer, so these are the best local estimates, and the docs say so.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.real import ROOT

INSTRUCTION = (
    "Refactor the billing package so that every invoice total is computed in one place. "
    "Never touch the production database; staging only."
)
SYSTEM = "You are a careful coding agent. Use the tools to read files before you change them."
WORDS = ("invoice", "total", "amount", "currency", "discount", "tax", "customer", "ledger", "refund", "line")


def module_text(i: int, lines: int = 56) -> str:
    """A billing module's source of about 700 tokens (our own made-up code, deterministic)."""
    rng = random.Random(i)
    out = [f'"""Billing module {i}: {rng.choice(WORDS)} handling."""', "", "from decimal import Decimal", ""]
    while len(out) < lines:
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        out += [
            f"def {a}_{b}_{len(out)}(items, rate=Decimal('0.{rng.randint(10, 99)}')):",
            f"    total = sum(item.{a} * rate for item in items if item.{b} is not None)  # module {i}",
            f"    return round(total + Decimal('{rng.randint(1, 999)}.{rng.randint(10, 99)}'), 2)",
            "",
        ]
    return "\n".join(out[:lines])


def log_dump(size: int = 110_000) -> str:
    """A service log of about ``size`` bytes, with one error line in the middle."""
    lines, i = [], 0
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(
            f"2026-12-01T10:{i // 600 % 60:02d}:{i // 10 % 60:02d}Z INFO billing.worker job={i} "
            f"invoices={i % 37} duration_ms={i * 7 % 311}"
        )
        i += 1
    lines[len(lines) // 2] = "2026-12-01T11:02:03Z ERROR billing.worker job=4242 total mismatch on invoice INV-8841"
    return "\n".join(lines)


def agent_chat(steps: int = 30, big_at: int = 12) -> list[dict[str, Any]]:
    """The request in OpenAI chat's shape: system, the instruction, then ``steps`` tool calls with their
    results (file reads of about 700 tokens; step ``big_at`` reads a 110 KB log)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": INSTRUCTION}]
    for i in range(steps):
        name, args = (
            ("read_log", {"path": "logs/billing.log"})
            if i == big_at
            else ("read_file", {"path": f"billing/module_{i}.py"})
        )
        call = {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{i}", "content": log_dump() if i == big_at else module_text(i)}
        )
    return messages


def as_responses(history: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The same request as Responses ``instructions`` and input items (written by hand here)."""
    items: list[dict[str, Any]] = []
    for m in history[1:]:
        if m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
            continue
        if m["content"]:
            items.append({"role": m["role"], "content": _responses_parts(m["content"])})
        for c in m.get("tool_calls") or []:
            items.append(
                {
                    "type": "function_call",
                    "call_id": c["id"],
                    "name": c["function"]["name"],
                    "arguments": c["function"]["arguments"],
                }
            )
    return history[0]["content"], items


def as_anthropic(history: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The same request as Anthropic ``system`` and messages: tool results in the next user message."""
    out: list[dict[str, Any]] = []
    for m in history[1:]:
        role = "assistant" if m["role"] == "assistant" else "user"
        if m["role"] == "tool":
            blocks = [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}]
        else:
            blocks = _anthropic_blocks(m["content"])
            blocks += [
                {
                    "type": "tool_use",
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "input": json.loads(c["function"]["arguments"]),
                }
                for c in m.get("tool_calls") or []
            ]
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": blocks})
    return history[0]["content"], out


def _responses_parts(content: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    return [
        {"type": "input_text", "text": p["text"]}
        if p["type"] == "text"
        else {"type": "input_image", "image_url": p["image_url"]["url"], "detail": p["image_url"].get("detail", "auto")}
        for p in content
    ]


def _anthropic_blocks(content: str | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if not content:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks = []
    for p in content:
        if p["type"] == "text":
            blocks.append({"type": "text", "text": p["text"]})
        else:
            head, b64 = p["image_url"]["url"].split(",", 1)
            media = head.removeprefix("data:").removesuffix(";base64")
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": b64}})
    return blocks


# ------------------------------------------------------------------------------------------ counting

O200K_CACHE_NAME = "fb374d419588a4632f3f557e76b4b70aebbca790"  # sha1 of the vocabulary's official URL
PER_MESSAGE, REPLY, PER_CALL = 3, 3, 3  # the cookbook's framing a message, its reply priming; a call's framing


@cache
def _encoding() -> Any:
    """tiktoken's own o200k_base, from a copy of the vocabulary in a cache folder of its own (tiktoken may write
    there), found as tiktoken finds a cache entry (``TIKTOKEN_CACHE_DIR``), set only while it loads."""
    import tiktoken

    folder = Path(tempfile.mkdtemp(prefix="afm-tiktoken-"))
    shutil.copy(ROOT / "models" / "tiktoken" / O200K_CACHE_NAME, folder / O200K_CACHE_NAME)
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    try:
        return tiktoken.get_encoding("o200k_base")
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


def tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def chat_count(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """OpenAI's cookbook count of a chat request: 3 a message, every string field's tokens (a name +1), each
    tool call's id, name and arguments + 3, 3 for the reply; tool definitions as their compact JSON."""
    total = REPLY + (tokens(json.dumps(tools, separators=(",", ":"))) if tools else 0)
    for m in messages:
        total += PER_MESSAGE
        for key, value in m.items():
            if key == "tool_calls":
                for c in value or ():
                    total += tokens(c["id"]) + tokens(c["function"]["name"]) + tokens(c["function"]["arguments"])
                    total += PER_CALL
            elif key == "content" and isinstance(value, list):
                total += sum(tokens(p["text"]) for p in value if p.get("type") == "text")
            elif isinstance(value, str):
                total += tokens(value) + (1 if key == "name" else 0)
    return total


def responses_count(body: dict[str, Any]) -> int:
    """The same rule over a Responses body: instructions as a system message, each item as a message."""
    total = REPLY + (PER_MESSAGE + 1 + tokens(body["instructions"]) if body.get("instructions") else 0)
    for item in body["input"]:
        kind = item.get("type", "message")
        total += PER_MESSAGE
        if kind == "message":
            content = item["content"]
            texts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
            total += tokens(item["role"]) + sum(tokens(t) for t in texts)
        elif kind == "function_call":
            total += 1 + tokens(item["call_id"]) + tokens(item["name"]) + tokens(item["arguments"]) + PER_CALL
        elif kind == "function_call_output":
            total += 1 + tokens(item["call_id"]) + tokens(item["output"])
    return total


def anthropic_count(body: dict[str, Any]) -> int:
    """The same rule over a Messages body: system as a message, each block's text, tool use and result."""
    system = body.get("system")
    text = system if isinstance(system, str) else "".join(b["text"] for b in system or ())
    total = REPLY + (PER_MESSAGE + 1 + tokens(text) if text else 0)
    for m in body["messages"]:
        total += PER_MESSAGE + 1
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        for b in blocks:
            if b["type"] == "text":
                total += tokens(b["text"])
            elif b["type"] == "tool_use":
                total += tokens(b["id"]) + tokens(b["name"]) + tokens(json.dumps(b["input"])) + PER_CALL
            elif b["type"] == "tool_result":
                content = b["content"]
                total += tokens(b["tool_use_id"]) + tokens(
                    content if isinstance(content, str) else "".join(x.get("text", "") for x in content)
                )
    return total
