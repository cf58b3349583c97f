#!/usr/bin/env python3
"""Regenerate the multimodal test fixtures offline (issue 27): ``python -m scripts.make_media_fixtures``.

Inputs: html/*.html (our own text, English and Russian).
Needs: Debian `chromium` (headless), fonts-dejavu-core and fonts-liberation, Pillow, pypdf.
Writes into tests/fixtures/media/ (README.md there describes every file and credits the photos):
  png/<page>_<lang>.png        Chromium screenshot (64-colour palette PNG)
  png/<page>_<lang>.chat.jpg   forwarded through a messenger: 60 % size, JPEG quality 40
  png/<page>_<lang>.photo.jpg  phone photo of a screen: rotated, noise, blur, 85 % size, JPEG q55
  pdf/agreement_<lang>.pdf     Chromium print-to-pdf of a three-page agreement (text layer), dates fixed
  photo/*.jpg                  photos without text, from scikit-image's wheel (skimage/data), if installed
  bad/*                        inputs that must be refused: encrypted / truncated / empty PDF, PNG headers that
                               claim 40000 x 40000 and 12000 x 12000 pixels, text named .png, a JPEG with EXIF + GPS
  fixtures.json                every file: kind, language, variant, ground-truth text, key facts

Deterministic: same Chromium + fonts + Pillow give the same bytes (noise is seeded, PDF dates fixed).
Nothing is fetched from the network; Chromium runs with its background networking disabled.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unicodedata
import zlib
from html.parser import HTMLParser
from pathlib import Path

from PIL import Image, ImageChops, ImageFilter

HERE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "media"
HTML = HERE / "html"

# page name -> (window width, fixed height or None = render tall and trim the empty bottom)
PAGES = {
    "pricing": (900, None),
    "contract": (800, None),
    "chat": (420, None),
    "slide": (960, 540),
    "receipt": (380, None),
}
LANGS = ("en", "ru")

# facts that must survive OCR for AFM to see a binding constraint (exact substrings of the ground truth)
KEY_FACTS = {
    "pricing_en": ["$49", "$199", "1 March 2025"],
    "pricing_ru": ["3 900", "15 500", "1 марта 2025"],  # no engine reads the ₽ sign: keep it out of the facts
    "contract_en": ["15 October 2025", "EUR 48,000", "30 days"],
    "contract_ru": ["15 октября 2025", "3 500 000", "30 дней"],
    "chat_en": ["shellfish", "1,200 euros", "07:15"],
    "chat_ru": ["аллергия на орехи", "40 000 рублей", "07:15"],
    "slide_en": ["30 September", "15 minutes", "18,500 dollars"],
    "slide_ru": ["30 сентября", "15 минут", "1 700 000 рублей"],
    "receipt_en": ["20.45", "14/09/2025", "****4821"],
    "receipt_ru": ["1 290,00", "14.09.2025", "****4821"],
}

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--disable-extensions",
    "--mute-audio",
    "--disable-default-apps",
    "--no-default-browser-check",
]
FIXED_PDF_DATE = b"D:20250101000000+00'00'"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    sys.exit("chromium not found: apt-get install -y chromium fonts-liberation")


# ---------------------------------------------------------------- ground truth from the HTML
BLOCK = {"h1", "h2", "h3", "p", "div", "tr", "li", "ul", "ol", "table", "br"}
CELL = {"td", "th", "span"}


class _Text(HTMLParser):
    """Visible text in reading order: block elements (and spans shown as blocks) end a line, cells
    and inline spans on one line are separated by a space."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[list[str]] = [[]]
        self.skip = 0
        self.block_spans: list[bool] = []

    def _newline(self) -> None:
        if self.lines[-1]:
            self.lines.append([])

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "title", "script", "head"):
            self.skip += 1
        elif tag in BLOCK:
            self._newline()
        elif tag == "span":
            is_block = dict(attrs).get("class") in ("n", "t")  # chat: name and time are display:block
            self.block_spans.append(is_block)
            if is_block:
                self._newline()
            else:
                self.lines[-1].append(" ")
        elif tag in CELL:
            self.lines[-1].append(" ")

    def handle_endtag(self, tag):
        if tag in ("style", "title", "script", "head"):
            self.skip -= 1
        elif tag in BLOCK:
            self._newline()
        elif tag == "span":
            if self.block_spans.pop():
                self._newline()
        elif tag in CELL:
            self.lines[-1].append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.lines[-1].append(data)


def ground_truth(html: str) -> str:
    p = _Text()
    p.feed(html)
    out = []
    for parts in p.lines:
        line = re.sub(r"\s+", " ", "".join(parts)).strip()
        if line:
            out.append(line)
    return unicodedata.normalize("NFC", "\n".join(out))


# ---------------------------------------------------------------- rendering
def render_png(html: Path, out: Path, width: int, height: int | None) -> None:
    tall = height or 1400
    with tempfile.TemporaryDirectory() as prof:
        tmp = Path(prof) / "shot.png"
        subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={prof}",
                f"--window-size={width},{tall}",
                f"--screenshot={tmp}",
                html.as_uri(),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        img = Image.open(tmp).convert("RGB")
        img.load()
    if height is None:
        img = trim_bottom(img, margin=18)
    # 64-colour palette, no dithering: visually lossless for flat UI text, 2.5-4x smaller than RGB
    img.quantize(64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(out, optimize=True)


def trim_bottom(img: Image.Image, margin: int) -> Image.Image:
    """Cut the empty rows under the content (same colour as the last row), keeping `margin` px."""
    w, h = img.size
    bg = img.getpixel((w - 1, h - 1))
    solid = Image.new("RGB", (w, 1), bg)
    y = h - 1
    while y > 0 and ImageChops.difference(img.crop((0, y, w, y + 1)), solid).getbbox() is None:
        y -= 1
    return img.crop((0, 0, w, min(h, y + 1 + margin)))


def render_pdf(html: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as prof:
        tmp = Path(prof) / "doc.pdf"
        subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={prof}",
                "--no-pdf-header-footer",
                f"--print-to-pdf={tmp}",
                html.as_uri(),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        data = tmp.read_bytes()
    out.write_bytes(fix_pdf_dates(data))


def fix_pdf_dates(data: bytes) -> bytes:
    # same-length replacement keeps the xref offsets valid
    def sub(m: re.Match) -> bytes:
        val = m.group(2)
        fixed = FIXED_PDF_DATE[: len(val)].ljust(len(val), b"0") if len(val) != len(FIXED_PDF_DATE) else FIXED_PDF_DATE
        return m.group(1) + b"(" + fixed + b")"

    return re.sub(rb"(/(?:CreationDate|ModDate)\s*)\(([^)]*)\)", sub, data)


# ---------------------------------------------------------------- degraded variants
def grey_noise(img: Image.Image, amplitude: int, seed: int) -> Image.Image:
    """Add seeded grey noise, triangular in [-amplitude, +amplitude] (sigma = amplitude / 2.45)."""
    rng = random.Random(seed)
    w, h = img.size
    a = Image.frombytes("L", (w, h), rng.randbytes(w * h))
    b = Image.frombytes("L", (w, h), rng.randbytes(w * h))
    tri = ImageChops.add(a, b, scale=2.0)  # mean of two uniforms: triangular around 127.5
    scaled = tri.point(lambda v: round(v * 2 * amplitude / 255))
    noise = Image.merge("RGB", (scaled, scaled, scaled))
    pos = ImageChops.add(img, noise, scale=1.0, offset=0)
    return ImageChops.subtract(pos, Image.new("RGB", (w, h), (amplitude,) * 3))


def scale(img: Image.Image, f: float) -> Image.Image:
    return img.resize((round(img.width * f), round(img.height * f)), Image.LANCZOS)


def rotate(img: Image.Image, deg: float) -> Image.Image:
    bg = img.getpixel((img.width - 1, img.height - 1))
    return img.rotate(deg, resample=Image.BICUBIC, expand=True, fillcolor=bg)


def save_jpeg(img: Image.Image, p: Path, q: int) -> Path:
    img.save(p, "JPEG", quality=q)
    return p


# committed: two realistic combinations that cover the four degradations
def degrade_core(img: Image.Image, dest: Path, stem: str, seed: int) -> dict[str, Path]:
    return {
        # a screenshot forwarded through a messenger: downscaled to 60 %, JPEG quality 40
        "chat": save_jpeg(scale(img, 0.6), dest / f"{stem}.chat.jpg", 40),
        # a phone photo of a screen: rotated 1.5 degrees, grey noise (sigma ~ 6.5), a slight blur,
        # 85 % size, JPEG quality 55
        "photo": save_jpeg(
            scale(grey_noise(rotate(img, 1.5), 16, seed).filter(ImageFilter.GaussianBlur(0.6)), 0.85),
            dest / f"{stem}.photo.jpg",
            55,
        ),
    }


# bench only (not committed): each degradation alone
def degrade_single(img: Image.Image, dest: Path, stem: str, seed: int) -> dict[str, Path]:
    p = dest / f"{stem}.small60.png"
    scale(img, 0.6).save(p, optimize=True)
    return {
        "small60": p,
        "q40": save_jpeg(img, dest / f"{stem}.q40.jpg", 40),
        "rot": save_jpeg(rotate(img, 1.5), dest / f"{stem}.rot.jpg", 92),
        "noise": save_jpeg(grey_noise(img, 20, seed), dest / f"{stem}.noise.jpg", 92),
    }


# ---------------------------------------------------------------- photos and bad inputs
def photos(dest: Path) -> list[dict]:
    """Photos without text from scikit-image's wheel (skimage/data/{astronaut,coffee,chelsea}.png are
    inside the wheel; no pooch download). Re-encoded at 400 px so that the fixtures stay small."""
    try:
        import skimage
    except ImportError:
        print("scikit-image not installed: photo/ left as it is", file=sys.stderr)
        return (
            [e for e in json.loads((HERE / "fixtures.json").read_text(encoding="utf-8")) if e["kind"] == "photo"]
            if (HERE / "fixtures.json").exists()
            else []
        )
    data = Path(skimage.__file__).parent / "data"
    items = []
    for name in ("astronaut", "coffee", "chelsea"):
        img = Image.open(data / f"{name}.png").convert("RGB")
        img.thumbnail((400, 400), Image.LANCZOS)
        p = dest / f"{name}.jpg"
        img.save(p, "JPEG", quality=75)
        items.append(
            {
                "file": f"photo/{name}.jpg",
                "kind": "photo",
                "lang": None,
                "variant": "clean",
                "text": "",
                "size": list(img.size),
                "source": f"scikit-image {skimage.__version__} wheel: skimage/data/{name}.png",
            }
        )
    return items


def bomb_png(width: int, height: int) -> bytes:
    """A valid PNG header claiming width x height grey pixels, with only 16 rows of data: < 1 KB."""

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    comp = zlib.compressobj(9)
    row = b"\x00" * (width + 1)
    idat = b"".join(comp.compress(row) for _ in range(16)) + comp.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", idat)
        + chunk(b"IEND", b"")
    )


def bad_inputs(dest: Path, sample_pdf: Path, sample_png: Path) -> list[dict]:
    from pypdf import PdfReader, PdfWriter

    items = []

    def add(name: str, data: bytes | None, expect: str) -> None:
        p = dest / name
        if data is not None:
            p.write_bytes(data)
        items.append({"file": f"bad/{name}", "kind": "bad", "expect": expect})

    # Encrypted with a user password (RC4-128: pypdf writes it without the `cryptography` package).
    # pypdf puts a random /ID into it, so it is written once and then kept, to stay byte-stable.
    enc = None
    if not (dest / "encrypted.pdf").exists():
        w = PdfWriter()
        w.append(PdfReader(sample_pdf), pages=[0])
        w.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
        buf = io.BytesIO()
        w.write(buf)
        enc = buf.getvalue()
    add("encrypted.pdf", enc, "refuse: encrypted PDF (user password 'secret')")
    one = PdfWriter()
    one.append(PdfReader(sample_pdf), pages=[0])
    buf = io.BytesIO()
    one.write(buf)
    full = buf.getvalue()
    add("truncated.pdf", full[: len(full) // 2], "refuse: corrupt PDF (first half only: no xref, no trailer)")
    add("empty.pdf", b"", "refuse: empty file")
    add("not_really.png", b"This is plain text, not an image.\n", "refuse: bytes are text, name says PNG")
    add(
        "bomb_40000x40000.png",
        bomb_png(40000, 40000),
        "refuse: decompression bomb (1.6 Gpx > 2 x Image.MAX_IMAGE_PIXELS: DecompressionBombError)",
    )
    add(
        "bomb_12000x12000.png",
        bomb_png(12000, 12000),
        "refuse or warn: 144 Mpx > Image.MAX_IMAGE_PIXELS (89.5 Mpx): DecompressionBombWarning only",
    )
    # JPEG with EXIF: make, model, orientation and a GPS position; a thumbnail must drop all of it
    img = Image.open(sample_png).convert("RGB")
    img.thumbnail((300, 300))
    exif = Image.Exif()
    exif[0x010F] = "AFM Test Camera Co"  # Make
    exif[0x0110] = "Model X"  # Model
    exif[0x0112] = 1  # Orientation
    exif[0x8825] = {1: "N", 2: (55.0, 45.0, 21.0), 3: "E", 4: (37.0, 37.0, 4.0)}  # GPS IFD
    b = io.BytesIO()
    img.save(b, "JPEG", quality=70, exif=exif)
    add("with_exif_gps.jpg", b.getvalue(), "accept: the thumbnail / re-encode must carry no EXIF (GPS)")
    return items


def sections(html: str) -> list[str]:
    """Ground truth per printed page of a multi-page HTML (one <section> per page)."""
    head = html.split("<body>")[0]
    return [
        ground_truth(head + "<body>" + part.split("</section>")[0] + "</body>") for part in html.split("<section>")[1:]
    ]


# ---------------------------------------------------------------- main
def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--bench",
        type=Path,
        help="also write the measurement-only set (each degradation "
        "alone, a one-page PDF per page) into this folder, with bench.json",
    )
    args = ap.parse_args()
    for d in ("png", "pdf", "photo", "bad"):
        (HERE / d).mkdir(exist_ok=True)
    bench_entries = []
    if args.bench:
        (args.bench / "png").mkdir(parents=True, exist_ok=True)
        (args.bench / "pdf").mkdir(parents=True, exist_ok=True)
    entries = []
    seed = 0
    for page, (width, height) in PAGES.items():
        for lang in LANGS:
            stem = f"{page}_{lang}"
            src = HTML / f"{stem}.html"
            text = ground_truth(src.read_text(encoding="utf-8"))
            facts = KEY_FACTS[stem]
            for f in facts:
                assert f in text, (stem, f)
            png = HERE / "png" / f"{stem}.png"
            render_png(src, png, width, height)
            img = Image.open(png).convert("RGB")
            base = {
                "kind": "image",
                "page": page,
                "lang": lang,
                "text": text,
                "key_facts": facts,
                "source": f"html/{stem}.html",
            }
            entries.append({"file": f"png/{stem}.png", "variant": "clean", "size": list(img.size), **base})
            seed += 1
            for variant, p in degrade_core(img, HERE / "png", stem, seed).items():
                entries.append(
                    {"file": str(p.relative_to(HERE)), "variant": variant, "size": list(Image.open(p).size), **base}
                )
            if args.bench:
                for variant, p in degrade_single(img, args.bench / "png", stem, seed).items():
                    bench_entries.append(
                        {
                            "file": str(p.relative_to(args.bench)),
                            "variant": variant,
                            "size": list(Image.open(p).size),
                            **base,
                        }
                    )
                pdf = args.bench / "pdf" / f"{stem}.pdf"
                render_pdf(src, pdf)
                bench_entries.append(
                    {"file": f"pdf/{stem}.pdf", "variant": "pdf", "pages": 1, **{**base, "kind": "pdf"}}
                )
            print("made", stem, list(img.size), file=sys.stderr)
    for lang in LANGS:
        src = HTML / f"agreement_{lang}.html"
        out = HERE / "pdf" / f"agreement_{lang}.pdf"
        render_pdf(src, out)
        pages = sections(src.read_text(encoding="utf-8"))
        entries.append(
            {
                "file": f"pdf/agreement_{lang}.pdf",
                "kind": "pdf",
                "variant": "multipage",
                "lang": lang,
                "pages": len(pages),
                "text": "\n".join(pages),
                "page_texts": pages,
                "key_facts": KEY_FACTS[f"contract_{lang}"],
                "source": f"html/agreement_{lang}.html",
            }
        )
    entries += photos(HERE / "photo")
    entries += bad_inputs(HERE / "bad", HERE / "pdf" / "agreement_en.pdf", HERE / "png" / "chat_en.png")
    for root, items, name in ((HERE, entries, "fixtures.json"), (args.bench, bench_entries, "bench.json")):
        if root is None:
            continue
        for e in items:
            data = (root / e["file"]).read_bytes()
            e["sha256"] = hashlib.sha256(data).hexdigest()
            e["bytes"] = len(data)
        (root / name).write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{name}: {len(items)} files, {sum(e['bytes'] for e in items) / 1024:.0f} KiB", file=sys.stderr)


if __name__ == "__main__":
    main()
