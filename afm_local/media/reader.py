"""``LocalMediaReader``: the on-device ``MediaReader`` (Pillow, PDFium, and Tesseract when it is installed).

The type comes from the bytes, never from the part type, the file name or a claimed MIME type: a ``%PDF-``
header is a PDF; else what Pillow opens as PNG, JPEG, WebP or GIF is an image (its pixel count checked
from the header first); else strict UTF-8 without NUL bytes is text (plain or Markdown); anything else is
refused. Nothing is decoded before the byte and pixel limits are checked: an image's pixels from its
header, a PDF's pages by count and by size in points (as rendered for OCR), a text file by bytes.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from ..core.errors import AttachmentTooLarge, InvalidInput, UnsupportedAttachment
from ..core.parts import MediaInfo, MediaLimits, Thumbnail
from . import images, pdf
from .ocr import TesseractOcr

SNIFF_BYTES = 1024
THUMBNAIL_RENDER_SIDE = 2048  # a PDF's first page is rendered at 72 dpi, its longest side at most this


class LocalMediaReader:
    """Reads attachments on this machine; ``ocr`` (Tesseract) is optional: without it an image's text is
    empty and its caption and file name stand for it."""

    def __init__(self, ocr: TesseractOcr | None = None) -> None:
        self._ocr = ocr
        self.name = f"media+{ocr.name}" if ocr is not None else "media+no-ocr"

    @property
    def reads_text(self) -> bool:
        return self._ocr is not None

    def inspect(self, data: bytes, limits: MediaLimits) -> MediaInfo:
        if not data:
            raise InvalidInput("the file is empty")
        if len(data) > limits.max_bytes:
            raise AttachmentTooLarge(
                f"the file is {len(data):,} bytes; the limit is {limits.max_bytes:,} (AFMConfig.max_attachment_bytes)"
            )
        if data[:SNIFF_BYTES].lstrip().startswith(b"%PDF-"):
            return pdf.inspect(data, limits.max_pages, limits.max_pixels)
        image = images.inspect(data, limits.max_pixels)
        if image is not None:
            return image
        if b"\x00" not in data:
            if len(data) > limits.max_text_bytes:
                raise AttachmentTooLarge(
                    f"the text file is {len(data):,} bytes; the limit is {limits.max_text_bytes:,} "
                    "(AFMConfig.max_document_text_bytes)"
                )
            try:
                data.decode("utf-8")
                return MediaInfo("text", "text/plain")
            except UnicodeDecodeError:
                pass
        raise UnsupportedAttachment("the file is not a PNG, JPEG, WebP or GIF image, a PDF, or UTF-8 text")

    def ocr(self, data: bytes) -> str:
        return self._ocr.read(images.load(data)) if self._ocr is not None else ""

    def pages(self, data: bytes) -> int:
        return pdf.page_count(data)

    def document_text(self, data: bytes) -> str:
        if data[:SNIFF_BYTES].lstrip().startswith(b"%PDF-"):
            scan: Callable[[Image.Image], str] | None = self._ocr.read if self._ocr is not None else None
            return pdf.text(data, scan)
        return data.decode("utf-8").strip()

    def thumbnail(self, data: bytes) -> Thumbnail:
        if data[:SNIFF_BYTES].lstrip().startswith(b"%PDF-"):
            return images.thumbnail(pdf.first_page(data, THUMBNAIL_RENDER_SIDE))
        return images.thumbnail(images.load(data))
