"""A file on disk as the OpenAI content part ``add_message`` takes: the Python API's file-path helper."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput
from ..core.parts import Detail

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}


def file_part(path: str | Path, detail: Detail = "auto", max_bytes: int = 64 << 20) -> dict[str, Any]:
    """``{"type": "image_url", ...}`` for an image file, else ``{"type": "file", ...}`` (a PDF, text or
    Markdown), with the bytes as a base64 ``data:`` URL. The name only picks the part type: ingest sniffs
    the bytes, so a PDF named ``.png`` is still read as a PDF."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"no such file: {path}")
    if path.stat().st_size > max_bytes:
        raise InvalidInput(f"{path} is larger than {max_bytes:,} bytes")
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is not None:
        url = f"data:{mime};base64,{data}"
        return {"type": "image_url", "image_url": {"url": url, "detail": detail}}
    file_data = f"data:application/octet-stream;base64,{data}"
    return {"type": "file", "file": {"filename": path.name, "file_data": file_data}}
