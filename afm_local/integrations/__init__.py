"""Adapters to what agents already use, each behind its extra: OpenTelemetry spans (``otel``, the ``otel``
extra), a LangChain v1 agent middleware (``langchain``, the ``langchain`` extra) and a LlamaIndex memory
(``llamaindex``, the ``llamaindex`` extra). Import the module you need; a missing extra names itself."""
