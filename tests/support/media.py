"""The multimodal fixtures (tests/fixtures/media, made by scripts/make_media_fixtures.py) and parts made of them."""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path

MEDIA = Path(__file__).resolve().parents[1] / "fixtures" / "media"


@cache
def fixtures() -> dict[str, dict]:
    """Every fixture file's record (ground truth, key facts), by its path under tests/fixtures/media."""
    return {e["file"]: e for e in json.loads((MEDIA / "fixtures.json").read_text(encoding="utf-8"))}


def data(name: str) -> bytes:
    return (MEDIA / name).read_bytes()


def image_part(name: str, detail: str = "auto", mime: str = "image/png") -> dict:
    url = f"data:{mime};base64," + base64.b64encode(data(name)).decode()
    return {"type": "image_url", "image_url": {"url": url, "detail": detail}}


def file_part(name: str, filename: str | None = None) -> dict:
    encoded = base64.b64encode(data(name)).decode()
    return {
        "type": "file",
        "file": {"filename": filename or Path(name).name, "file_data": f"data:application/pdf;base64,{encoded}"},
    }


def text(caption: str) -> dict:
    return {"type": "text", "text": caption}
