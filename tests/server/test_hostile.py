"""Hostile inputs against a real server: each is refused with its 4xx and a one-line message within a
deadline, before the work it would cost; the server stays up, stores nothing of it, and its peak memory
(``VmHWM`` of the server process, start-up included) stays under 1.5 GB.

The inputs are made here, byte by byte: a 400-byte PDF declaring a 14,400 × 14,400-pt blank page (829
million pixels at the 144 dpi of OCR), a 5,000-pt page, PNGs whose headers declare 100,000 × 100,000 and
45 million pixels over a few kilobytes of data, a zip archive sent as a PNG, and 10 MiB of text.
"""

from __future__ import annotations

import base64
import io
import struct
import time
import zipfile
import zlib
from pathlib import Path

import httpx
import pytest

from tests.server.test_server import AUTH, KEY, is_error
from tests.support.real import installed
from tests.support.stores import query

pytestmark = pytest.mark.skipif(not installed("multilingual-e5-small"), reason="run `afm-local models install`")

DEADLINE_S = 30.0  # per request, on two shared cores: the refusals themselves take milliseconds
PEAK_RSS_LIMIT = 1536 << 20


def blank_pdf(width: float, height: float) -> bytes:
    """A valid one-page PDF with no content, its MediaBox ``width`` × ``height`` points."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width:g} {height:g}] >>".encode(),
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def gray_png(width: int, height: int, rows: int | None = None) -> bytes:
    """A grayscale PNG declaring ``width`` × ``height``, with ``rows`` rows of black (all of them by default)
    compressed: a few kilobytes that decode to ``width * height`` bytes."""
    compressor, row = zlib.compressobj(9), b"\x00" * (width + 1)
    body = b"".join(compressor.compress(row) for _ in range(height if rows is None else rows)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


def zip_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.txt", "x" * 100_000)
    return out.getvalue()


def image(data: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}}


def document(data: bytes, name: str) -> dict:
    encoded = base64.b64encode(data).decode()
    return {"type": "file", "file": {"filename": name, "file_data": f"data:application/octet-stream;base64,{encoded}"}}


def cases() -> list[tuple[str, dict, int, str]]:
    page_bomb = blank_pdf(14_400, 14_400)
    assert len(page_bomb) < 450
    return [
        ("14,400-pt PDF page", document(page_bomb, "bomb.pdf"), 413, "pt"),
        ("5,000-pt PDF page", document(blank_pdf(5_000, 5_000), "big.pdf"), 413, "the limit is 40,000,000"),
        ("PNG declaring 100,000 × 100,000", image(gray_png(100_000, 100_000, rows=16)), 413, "pixels"),
        ("PNG of 45 million pixels", image(gray_png(7_500, 6_000)), 413, "the limit is 40,000,000"),
        ("zip sent as a PNG", image(zip_bytes()), 415, "not a PNG, JPEG, WebP or GIF image"),
        (
            "10 MiB of text",
            document(b"All work and no play. " * (10 * 1024 * 1024 // 22), "big.txt"),
            413,
            "the limit is 524,288",
        ),
    ]


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def rows(db: str) -> dict[str, int]:
    return {t: query(db, f"SELECT COUNT(*) FROM {t}")[0][0] for t in ("messages", "attachments", "artifacts")}


@pytest.fixture(scope="module")
def server(spawn_module_server, tmp_path_factory):
    db = tmp_path_factory.mktemp("hostile") / "hostile.db"
    srv = spawn_module_server(
        "--db", str(db), "--api-key-env", "AFM_TEST_KEY", "--no-abstractive", env={"AFM_TEST_KEY": KEY}, name="hostile"
    )
    srv.db = str(db)
    return srv


def test_hostile_inputs_are_refused_before_the_work(server, capsys):
    assert server.proc is not None
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=DEADLINE_S * 4, trust_env=False) as client:
        sid = client.post("/v1/sessions").json()["id"]
        before = rows(server.db)
        figures = []
        for name, part, status, message in cases():
            for route, body in (
                (f"/v1/sessions/{sid}/messages", {"role": "user", "content": [{"type": "text", "text": "see"}, part]}),
                (
                    "/v1/chat/completions",
                    {"messages": [{"role": "user", "content": [part]}, {"role": "user", "content": "q"}]},
                ),
            ):
                start = time.monotonic()
                r = client.post(route, json=body)
                elapsed = time.monotonic() - start
                error = is_error(r, status)
                assert message in error["message"] and "\n" not in error["message"], (name, route, error)
                assert elapsed < DEADLINE_S, (name, route, elapsed)
            assert client.get("/healthz").status_code == 200, name
            figures.append((name, elapsed, peak_rss(server.proc.pid)))
        assert rows(server.db) == before  # nothing half-stored: no message, file or derived artifact
        assert client.get(f"/v1/sessions/{sid}").json()["messages"] == []
    with capsys.disabled():
        for name, elapsed, peak in figures:
            print(f"\n  {name}: {elapsed * 1000:.0f} ms, server peak RSS {peak / 2**20:.0f} MiB", end="")
        print()
    assert server.alive()
    assert peak_rss(server.proc.pid) < PEAK_RSS_LIMIT


def test_a_text_under_the_byte_limit_but_over_the_token_limit_is_refused(server):
    """A text file under the byte limit but over the token limit: counted, then refused, before any embedding."""
    digits = " ".join(str(n) for n in range(60_000))  # about 340 KB and 100,000 tokens
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=DEADLINE_S * 4, trust_env=False) as client:
        sid = client.post("/v1/sessions").json()["id"]
        start = time.monotonic()
        r = client.post(
            f"/v1/sessions/{sid}/messages", json={"role": "user", "content": [document(digits.encode(), "n.txt")]}
        )
        error = is_error(r, 413)
        assert "tokens; the limit is 50,000" in error["message"], error
        assert time.monotonic() - start < DEADLINE_S
        assert client.get(f"/v1/sessions/{sid}").json()["messages"] == []


def test_the_largest_image_within_the_limit_is_read_within_bounds(server):
    """39.7 million pixels in 38 KB, under the limit: accepted, and read (decoded, OCR on a reduced copy,
    thumbnail) without the server's peak memory passing the bound."""
    assert server.proc is not None
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=120, trust_env=False) as client:
        sid = client.post("/v1/sessions").json()["id"]
        start = time.monotonic()
        r = client.post(
            f"/v1/sessions/{sid}/messages", json={"role": "user", "content": [image(gray_png(6_300, 6_300))]}
        )
        assert r.status_code == 201, r.text
        elapsed = time.monotonic() - start
        assert elapsed < 60
        attachment = client.get(f"/v1/sessions/{sid}").json()["messages"][0]["attachments"][0]
        assert (attachment["width"], attachment["height"]) == (6_300, 6_300)
    print(
        f"\n  39.7-megapixel PNG accepted in {elapsed:.1f} s, "
        f"server peak RSS {peak_rss(server.proc.pid) / 2**20:.0f} MiB"
    )
    assert peak_rss(server.proc.pid) < PEAK_RSS_LIMIT
