"""PDF documents through PDFium (pypdfium2): open and count pages, read the text layer, render the first page.

PDFium's error codes name what is wrong (4: encrypted, 3: corrupt or not a PDF). A page without a text
layer (a scan) is rendered at 144 dpi and read by the OCR engine when there is one. Every page's size is
checked from the page tree before anything is rendered (a 400-byte PDF can declare a 14,400-pt page, 829
million pixels at 144 dpi), and every render is bounded again where it happens. PDFium is not
thread-safe, so every call holds one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pypdfium2 as pdfium
from PIL import Image

from ..core.errors import AttachmentTooLarge, InvalidInput
from ..core.parts import MediaInfo

LOCK = threading.Lock()
SCAN_SCALE = 2.0  # 144 dpi: the best OCR of scanned pages measured (300 dpi read tables out of order)
MAX_RENDER_PIXELS = 40_000_000  # whatever the limits: no page render is larger (AFMConfig.max_image_pixels' default)
MIN_PAGE_TEXT = 8  # a page with fewer characters of text layer is treated as scanned
ERRORS = {
    4: "the PDF is encrypted (password-protected); send it without a password",
    3: "the PDF is corrupt or not a PDF",
    2: "the PDF cannot be read",
}


@contextmanager
def opened(data: bytes) -> Iterator[pdfium.PdfDocument]:
    with LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise InvalidInput(ERRORS.get(getattr(exc, "err_code", 0) or 0, "the PDF cannot be read")) from None
        try:
            yield document
        finally:
            document.close()


def inspect(data: bytes, max_pages: int, max_pixels: int) -> MediaInfo:
    """A PDF that opens, has between 1 and ``max_pages`` pages, and whose every page rendered for OCR (at
    ``SCAN_SCALE``) has at most ``max_pixels`` pixels: sizes read from the page tree, nothing rendered."""
    with opened(data) as document:
        pages = len(document)
        if pages == 0:
            raise InvalidInput("the PDF has no pages")
        if pages > max_pages:
            raise AttachmentTooLarge(
                f"the PDF has {pages} pages; the limit is {max_pages} (AFMConfig.max_document_pages)"
            )
        for index in range(pages):
            width, height = document.get_page_size(index)
            if rendered_pixels(width, height, SCAN_SCALE) > max_pixels:
                raise AttachmentTooLarge(
                    f"page {index + 1} of the PDF is {width:,.0f}×{height:,.0f} pt, "
                    f"{rendered_pixels(width, height, SCAN_SCALE):,} pixels at {72 * SCAN_SCALE:.0f} dpi; "
                    f"the limit is {max_pixels:,} (AFMConfig.max_image_pixels)"
                )
    return MediaInfo("pdf", "application/pdf")


def rendered_pixels(width: float, height: float, scale: float) -> int:
    """Pixels of a ``width`` × ``height``-point page rendered at ``scale`` (1.0: 72 dpi)."""
    return max(1, round(abs(width) * scale)) * max(1, round(abs(height) * scale))


def bounded_scale(width: float, height: float, scale: float, max_pixels: int) -> float:
    """``scale``, lowered so that the page rendered at it has at most ``max_pixels`` pixels."""
    pixels = rendered_pixels(width, height, scale)
    return scale if pixels <= max_pixels else scale * (max_pixels / pixels) ** 0.5 * 0.999


def page_count(data: bytes) -> int:
    with opened(data) as document:
        return len(document)


def text(data: bytes, ocr: Callable[[Image.Image], str] | None) -> str:
    """Every page's text, pages separated by a blank line; a scanned page is read by ``ocr`` if given."""
    out = []
    with opened(data) as document:
        for page in document:
            found = tidy(page.get_textpage().get_text_bounded())
            if len(found) < MIN_PAGE_TEXT and ocr is not None:
                # inspect() refused oversized pages; the bound holds here too, whatever inspected the bytes
                width, height = page.get_size()
                scale = bounded_scale(width, height, SCAN_SCALE, MAX_RENDER_PIXELS)
                found = ocr(page.render(scale=scale).to_pil().convert("RGB"))
            out.append(found)
    return "\n\n".join(page for page in out if page)


def tidy(text: str) -> str:
    """Lines with their whitespace collapsed, empty lines dropped."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def first_page(data: bytes, side: int) -> Image.Image:
    """The first page rendered at 72 dpi or less, its longest side at most ``side`` pixels (a thumbnail is
    made from it): the render costs the thumbnail's size, not the page's."""
    with opened(data) as document:
        page = document[0]
        width, height = page.get_size()
        scale = min(1.0, side / max(abs(width), abs(height), 1.0))
        return page.render(scale=scale).to_pil().convert("RGB")
