"""The proxy formats, one pure module per API: OpenAI chat completions (``openai_chat``), OpenAI Responses
(``responses``) and Anthropic Messages (``anthropic``). Each splits a request into what AFM packs (core
``Turn`` records, through ``core.turns.as_turn``) and what it passes through (``split.Split``), and writes
a packed context, which the engine renders as OpenAI chat messages, back in its own format."""
