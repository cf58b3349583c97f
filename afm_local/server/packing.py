"""The one place a caller's conversation is packed, for every door: the session-context and stateless
routes, the three proxies and the MCP tools all build ``PackOptions`` from their request and call
``pack_session`` (a stored session) or ``pack_split`` (a conversation sent whole, ``core.split``).

``PackOptions`` carries what a caller may choose per call: the budget (``budget_tokens``, its one name at
afm's own doors), the engine's per-call options (``core.config.CALL_OPTIONS``: render, packing, fill,
spend, overflow) and, for the proxies, the target model (its image-token rule) and the tokens of what
is sent beside the messages (tool definitions). A new per-call option is a field of
``schemas.PackChoices`` and of ``PackOptions``: every door then takes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

from ..core.accounting import verbatim_cost
from ..core.config import AFMConfig, Fill, Overflow, Packing, Render, Spend
from ..core.errors import InvalidInput
from ..core.imagecost import rule_for
from ..core.split import Split
from ..core.types import Context
from ..engine import FocusManager
from .schemas import PackChoices
from .state import AppState
from .store import TenantStore


@dataclass(frozen=True, slots=True)
class PackOptions:
    """One call's choices: the budget, the engine's per-call options (``None``: the config's), the target
    model and the tokens sent beside the messages."""

    budget_tokens: int
    render: Render | None = None
    packing: Packing | None = None
    fill: Fill | None = None
    spend: Spend | None = None
    overflow: Overflow | None = None
    model: str | None = None  # the target model: which image-token rule counts images (core.imagecost)
    beside_tokens: int = 0  # what the request sends beside its messages (tool definitions), within the budget

    @classmethod
    def of(cls, choices: PackChoices | None, budget_tokens: int, **extra: Any) -> PackOptions:
        """From a door's ``PackChoices`` (its ``budget_tokens`` wins over ``budget_tokens`` when set)."""
        chosen = {name: getattr(choices, name) for name in PackChoices.model_fields} if choices is not None else {}
        return cls(getattr(choices, "budget_tokens", None) or budget_tokens, **chosen, **extra)

    def engine_options(self) -> dict[str, Any]:
        """The per-call options ``FocusManager.build_context`` takes."""
        skip = ("budget_tokens", "model", "beside_tokens")
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}


def config_for(state: AppState, model: str | None) -> AFMConfig:
    """The server's config, counting images by ``model``'s rule when it has one (else the configured
    ``vision_model``'s: the documented default for a model we know no rule of)."""
    config = state.settings.config
    if not model or model == config.vision_model:
        return config
    try:
        rule_for(model, config.image_rules)
    except InvalidInput:
        return config
    return config.model_copy(update={"vision_model": model})


def baseline(fm: FocusManager, query: str, preamble: str | None) -> int:
    """What sending the whole history verbatim would cost (the "tokens saved" baseline)."""
    return verbatim_cost((m.tokens_full for m in fm.messages), fm.components.counter, query, preamble, fm.config)


async def pack_session(
    state: AppState, store: TenantStore, session_id: str, query: str, preamble: str | None, opts: PackOptions
) -> tuple[Context, int]:
    """A stored session of the caller's tenant packed for ``query``, and its baseline."""
    fm = await state.sessions.manager(store, session_id)

    def work() -> tuple[Context, int]:
        ctx = fm.build_context(query, opts.budget_tokens, preamble, **opts.engine_options())
        return ctx, baseline(fm, query, preamble)

    return await state.run(work)


async def pack_split(state: AppState, tenant: str, split: Split, opts: PackOptions) -> tuple[Context, int]:
    """A conversation sent whole (a proxy's request, the stateless route) packed on a fresh manager over the
    tenant's own memory-only cache, the loop after the query included; and its baseline."""

    def work() -> tuple[Context, int]:
        fm = state.manager(state.stateless_cache(tenant), config=config_for(state, opts.model))
        ctx = fm.pack_split(split, opts.budget_tokens, beside=opts.beside_tokens, **opts.engine_options())
        return ctx, baseline(fm, split.query, split.preamble) + opts.beside_tokens

    return await state.run(work)


def tools_tokens(state: AppState, tools: Any) -> int:
    """What a request's tool definitions cost, counted as their JSON text (each API formats them its own way
    before counting, which no client can see: an estimate, stated in docs/server.md)."""
    if not tools:
        return 0
    assert state.components is not None
    return state.components.counter.count(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
