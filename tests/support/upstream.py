"""A minimal OpenAI-compatible upstream on a loopback port, for the fuzz tests of /v1/chat/completions.

The upstream LLM is outside afm-local: the fuzz tests drive thousands of generated chat requests
through the proxy, which a real model would answer in minutes each. This one answers every request at
once with a fixed completion (streamed as server-sent events when asked), so that what is tested is
the proxy's handling of generated input, not a model.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPLETION = {
    "id": "chatcmpl-fuzz",
    "object": "chat.completion",
    "created": 0,
    "model": "fuzz-upstream",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if body.get("stream"):
            data = b"data: " + json.dumps(COMPLETION).encode() + b"\n\ndata: [DONE]\n\n"
            kind = "text/event-stream"
        else:
            data, kind = json.dumps(COMPLETION).encode(), "application/json"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class Upstream:
    """``with Upstream() as up: up.url``: serving on a free 127.0.0.1 port until the block ends."""

    def __enter__(self) -> "Upstream":
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
