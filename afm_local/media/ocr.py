"""Text in images through Tesseract 5 (tesserocr, whose wheel bundles libtesseract), English and Russian.

Chosen by measurement (docs/ocr_choice.md): with images enlarged
so that the longest side is about 2,000 px (at most 3×), Tesseract's character error rate was 2–3 % on
clean and degraded screenshots in both languages, at 0.2–0.4 s an image on one thread. An image larger
than ``MAX_OCR_PIXELS`` is read reduced to that size: at 40 million pixels Tesseract alone took 5 s and
over 400 MB. The language
data (``eng``, ``rus``) comes from Debian's ``tesseract-ocr-eng`` and ``tesseract-ocr-rus``; the folder is
always passed explicitly, because the wheel's built-in default is the current directory.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PIL import Image

from .pdf import tidy

TARGET_SIDE = 2000  # enlarge small screenshots before OCR: Tesseract misreads small text
MAX_ENLARGE = 3.0
MAX_OCR_PIXELS = 16_000_000  # larger images are read reduced to this (a 5K screenshot is 14.7 million)


class TesseractOcr:
    """One Tesseract engine for ``languages`` over the ``tessdata`` folder, started on first use (70 ms, so
    a process that reads no image pays nothing); calls are serialised (the engine is not thread-safe)."""

    def __init__(self, tessdata: Path, languages: str = "eng+rus") -> None:
        import tesserocr

        missing = [lang for lang in languages.split("+") if not (tessdata / f"{lang}.traineddata").is_file()]
        if missing:
            raise FileNotFoundError(f"no Tesseract data for {', '.join(missing)} in {tessdata}")
        self._tessdata, self._languages = tessdata, languages
        self._api: object = None
        self._lock = threading.Lock()
        self.name = f"tesseract-{tesserocr.PyTessBaseAPI.Version()}:{languages}"

    def _engine(self) -> object:
        if self._api is None:
            import tesserocr

            self._api = tesserocr.PyTessBaseAPI(path=str(self._tessdata), lang=self._languages)
        return self._api

    def read(self, image: Image.Image) -> str:
        """The text of a decoded RGB image, lines tidied."""
        factor = min(MAX_ENLARGE, TARGET_SIDE / max(image.size))
        if factor > 1.05:
            image = image.resize((round(image.width * factor), round(image.height * factor)), Image.Resampling.LANCZOS)
        elif image.width * image.height > MAX_OCR_PIXELS:  # Tesseract's own copies cost ~15 bytes a pixel
            shrink = (MAX_OCR_PIXELS / (image.width * image.height)) ** 0.5
            size = (max(1, int(image.width * shrink)), max(1, int(image.height * shrink)))
            image = image.resize(size, Image.Resampling.LANCZOS)
        with self._lock:
            engine: Any = self._engine()
            engine.SetImage(image)
            return tidy(engine.GetUTF8Text())
