"""PDF documents through PDFium (pypdfium2): open and count pages, read the text layer, render the first page.

PDFium's error codes name what is wrong (4: encrypted, 3: corrupt or not a PDF). A page without a text
layer (a scan) is rendered at 144 dpi and read by the OCR engine when there is one. PDFium is not
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


def inspect(data: bytes, max_pages: int) -> MediaInfo:
    """A PDF that opens and has between 1 and ``max_pages`` pages."""
    with opened(data) as document:
        pages = len(document)
    if pages == 0:
        raise InvalidInput("the PDF has no pages")
    if pages > max_pages:
        raise AttachmentTooLarge(f"the PDF has {pages} pages; the limit is {max_pages} (AFMConfig.max_document_pages)")
    return MediaInfo("pdf", "application/pdf")


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
                found = ocr(page.render(scale=SCAN_SCALE).to_pil().convert("RGB"))
            out.append(found)
    return "\n\n".join(page for page in out if page)


def tidy(text: str) -> str:
    """Lines with their whitespace collapsed, empty lines dropped."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def first_page(data: bytes) -> Image.Image:
    """The first page rendered at 72 dpi (a thumbnail is made from it)."""
    with opened(data) as document:
        return document[0].render(scale=1.0).to_pil().convert("RGB")
