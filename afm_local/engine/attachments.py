"""Ingest of images and documents: each attachment read once through the cache, keyed by its bytes' sha256.

``AttachmentReader.read`` checks the limits (bytes, count, then pixels and pages from the reader's
inspection, before anything is decoded; a document's text by bytes and tokens before any other work),
then takes the OCR text, the document's text and pages and the thumbnail from the cache or the media
reader, and prices each form with the target model's image rule (``core.imagecost``). An ``http(s)``
image is never fetched: it is priced at the rule's worst case and can only be sent as given or named.
Bad input raises before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.config import AFMConfig
from ..core.errors import AttachmentTooLarge, InvalidInput, UnsupportedAttachment
from ..core.imagecost import image_tokens
from ..core.parts import Attached, Attachment, MediaInfo, Thumbnail
from ..core.protocols import MediaReader, Topicer
from .cache import ArtifactCache

KIND_WORDS = {"image": "image", "pdf": "PDF", "text": "file"}


class AttachmentReader:
    """Reads a turn's attachments through ``cache`` with ``media`` (``None``: attachments are refused)."""

    def __init__(
        self,
        media: MediaReader | None,
        config: AFMConfig,
        cache: ArtifactCache,
        count: Callable[[str], int] | None = None,
    ) -> None:
        self.media, self.config, self.cache, self.count = media, config, cache, count

    def read(self, attachments: Sequence[Attachment]) -> tuple[Attached, ...]:
        if len(attachments) > self.config.max_attachments:
            raise AttachmentTooLarge(
                f"a message has {len(attachments)} attachments; the limit is {self.config.max_attachments} "
                f"(AFMConfig.max_attachments)"
            )
        return tuple(self.one(a) for a in attachments)

    def one(self, a: Attachment) -> Attached:
        rule = self.config.image_rule
        if a.is_reference:
            cost = image_tokens(rule, 0, 0, a.detail)
            return Attached(a, None, a.filename or "image", "", 0, None, cost, cost)
        info = self.inspect(a)
        media, h, cache = self._reader(), a.sha256, self.cache
        name = a.filename or ("image" if info.kind == "image" else "document" if info.kind == "pdf" else "file")
        text, pages, thumbnail = "", 0, None
        if info.kind == "image":
            text = cache.ocr.get_or_compute(media.name, h, lambda: media.ocr(a.data))
            thumbnail = cache.thumbnails.get_or_compute(media.name, h, lambda: media.thumbnail(a.data))
        elif info.kind == "pdf":
            pages = cache.pages.get_or_compute(media.name, h, lambda: media.pages(a.data))
            if pages > self.config.max_document_pages:
                raise AttachmentTooLarge(f"the PDF has {pages} pages; the limit is {self.config.max_document_pages}")
            text = self.document_text(a)
            thumbnail = cache.thumbnails.get_or_compute(media.name, h, lambda: media.thumbnail(a.data))
        else:
            text = self.document_text(a)
        full = image_tokens(rule, info.width, info.height, a.detail) if info.kind == "image" else 0
        return Attached(a, info, name, text, pages, thumbnail, full, self._thumbnail_cost(thumbnail))

    def document_text(self, a: Attachment) -> str:
        """A document's text through the cache, within the text limits (checked before it is cached, and again
        on a cached text, which may come from a process with other limits)."""
        media = self._reader()
        return self._bounded(
            self.cache.document_text.get_or_compute(
                media.name, a.sha256, lambda: self._bounded(media.document_text(a.data))
            )
        )

    def _bounded(self, text: str) -> str:
        """``text``, or ``AttachmentTooLarge`` when it has more bytes or tokens than a document may have (the
        bytes first: tokens are counted only on a text that can be counted quickly)."""
        size, limit = len(text.encode("utf-8", "surrogatepass")), self.config.max_document_text_bytes
        if size > limit:
            raise AttachmentTooLarge(
                f"the document's text is {size:,} bytes; the limit is {limit:,} (AFMConfig.max_document_text_bytes)"
            )
        tokens = self.count(text) if self.count is not None else 0
        if tokens > self.config.max_document_tokens:
            raise AttachmentTooLarge(
                f"the document's text is {tokens:,} tokens; the limit is {self.config.max_document_tokens:,} "
                "(AFMConfig.max_document_tokens)"
            )
        return text

    def inspect(self, a: Attachment) -> MediaInfo:
        """What the bytes are, checked against this config's limits (a cached inspection is checked again:
        it may come from a process with other limits)."""
        limits = self.config.media_limits
        if len(a.data) > limits.max_bytes:
            raise AttachmentTooLarge(
                f"the file is {len(a.data):,} bytes; the limit is {limits.max_bytes:,} (AFMConfig.max_attachment_bytes)"
            )
        media = self._reader()
        info = self.cache.media.get_or_compute(media.name, a.sha256, lambda: media.inspect(a.data, limits))
        if info.width * info.height > limits.max_pixels:
            raise AttachmentTooLarge(
                f"the image is {info.width}×{info.height} pixels; the limit is {limits.max_pixels:,}"
            )
        if a.part == "image_url" and info.kind != "image":
            what = "a PDF" if info.kind == "pdf" else "text"
            raise UnsupportedAttachment(f"an image_url part holds {what}, not a PNG, JPEG, WebP or GIF image")
        return info

    def _reader(self) -> MediaReader:
        if self.media is None:
            raise InvalidInput("images and files need a media reader (Components.media); local_components() has one")
        return self.media

    def _thumbnail_cost(self, thumbnail: Thumbnail | None) -> int:
        return image_tokens(self.config.image_rule, thumbnail.width, thumbnail.height, "low") if thumbnail else 0


def attachment_topic(caption: str, attached: Sequence[Attached], topicer: Topicer) -> str:
    """A placeholder label for a message with attachments: the caption's key phrases, else those of the
    attachments' text, else their names; the first phrase says what it is (``pricing table image``)."""
    kinds = sorted({KIND_WORDS[a.kind] for a in attached})
    texts = [caption.strip(), "\n".join(a.text for a in attached if a.text.strip())]
    phrases = next((topicer.topic(text) for text in texts if text), "")
    if not phrases:
        return ", ".join(a.name for a in attached)
    first, _, rest = phrases.partition(",")
    return f"{first.strip()} {' and '.join(kinds)}" + (f",{rest}" if rest else "")
