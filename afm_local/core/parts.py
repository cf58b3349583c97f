"""Images and documents in a conversation: the content parts a caller gives, and what ingest makes of them.

A turn's content is its text plus ``Attachment`` records, parsed once from OpenAI content parts
(``text``, ``image_url``, ``file``) by ``content_of``, which ``core.turns.as_turn`` calls. An image
given by an ``http(s)`` URL is kept as a reference and never fetched. What the bytes really are (an
image, a PDF, a text file) is decided later, from the bytes, by the media reader
(``core.protocols.MediaReader``); ingest then records an ``Attached`` per attachment: its text (OCR or
the document's), its thumbnail and what each form costs the target model (``core.imagecost``);
``core.forms`` says what each fidelity sends of it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from .errors import InvalidInput

Detail = Literal["auto", "low", "high"]
DETAILS: tuple[Detail, ...] = get_args(Detail)
MediaKind = Literal["image", "pdf", "text"]
THUMBNAIL_SIDE = 256  # the longest side of a thumbnail, in pixels
_DATA_URL = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?(;[\w-]+=[^;,]*)*;base64,", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Attachment:
    """An image or file part of a turn as the caller gave it: the decoded bytes of a ``data:`` URL, or an
    ``http(s)`` image URL kept as a reference (never fetched). ``part`` is the part type the caller used;
    the bytes, not the part type or the claimed MIME type, decide what it is."""

    part: Literal["image_url", "file"]
    data: bytes = field(default=b"", repr=False)
    url: str = ""
    detail: Detail = "auto"
    filename: str = ""
    sha256: str = field(init=False, repr=False, compare=False)  # of the bytes (of the URL for a reference)

    def __post_init__(self) -> None:
        digest = hashlib.sha256(self.data if not self.url else self.url.encode()).hexdigest()
        object.__setattr__(self, "sha256", digest)

    @property
    def is_reference(self) -> bool:
        return bool(self.url)


@dataclass(frozen=True, slots=True)
class MediaLimits:
    """What one attachment may be (``AFMConfig``): bytes, pixels of an image or of a rendered page, pages of a
    document, bytes of a text file."""

    max_bytes: int
    max_pixels: int
    max_pages: int
    max_text_bytes: int = 512 << 10


@dataclass(frozen=True, slots=True)
class MediaInfo:
    """What an attachment's bytes are, sniffed and checked: its kind, type and (images) pixel size."""

    kind: MediaKind
    mime: str
    width: int = 0
    height: int = 0


@dataclass(frozen=True, slots=True)
class Thumbnail:
    """A small JPEG of an image or of a document's first page: longest side at most ``THUMBNAIL_SIDE``,
    re-encoded without any metadata."""

    data: bytes
    width: int
    height: int

    @property
    def data_url(self) -> str:
        return "data:image/jpeg;base64," + base64.b64encode(self.data).decode("ascii")


@dataclass(frozen=True, slots=True)
class Attached:
    """An attachment of a history message with what ingest derived from it, each computed once.

    ``tokens_full`` is what the image part costs sent as given (0 for a document, which is sent as its
    text); ``tokens_thumbnail`` what its thumbnail costs at ``detail: low`` (for a reference, which has
    no thumbnail, the original's cost: it can only be sent as given or named)."""

    source: Attachment
    info: MediaInfo | None  # None for an http(s) reference
    name: str  # the file name, the URL's last segment, or the kind
    text: str  # OCR text of an image, the text of a document; "" when there is none
    pages: int
    thumbnail: Thumbnail | None
    tokens_full: int
    tokens_thumbnail: int

    @property
    def kind(self) -> str:
        return self.info.kind if self.info is not None else "image"

    def summary(self) -> dict[str, object]:
        """What a client reads about it (the session API, the inspector): no original bytes."""
        info = self.info
        return {
            "sha256": self.source.sha256,
            "kind": self.kind,
            "mime": info.mime if info else "",
            "name": self.name,
            "url": self.source.url or None,
            "detail": self.source.detail,
            "width": info.width if info else None,
            "height": info.height if info else None,
            "pages": self.pages or None,
            "text_chars": len(self.text),
            "thumbnail": self.thumbnail.data_url if self.thumbnail else None,
            "tokens_full": self.tokens_full,
            "tokens_thumbnail": self.tokens_thumbnail,
        }


def content_of(content: object) -> tuple[str, tuple[Attachment, ...]]:
    """A message's text and attachments from a string or a list of OpenAI content parts (``text``,
    ``image_url``, ``file``); text parts are joined by newlines. ``InvalidInput`` names a bad part."""
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, Sequence) or isinstance(content, bytes | bytearray):
        raise InvalidInput("content must be a string or a list of content parts")
    texts: list[str] = []
    attachments: list[Attachment] = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url":
            attachments.append(_image_part(part.get("image_url"), i))
        elif kind == "file":
            attachments.append(_file_part(part.get("file"), i))
        else:
            raise InvalidInput(
                f"content part {i}: unsupported type {str(kind)[:32]!r}; expected text, image_url or file"
            )
    return "\n".join(texts), tuple(attachments)


def _image_part(value: object, i: int) -> Attachment:
    spec = {"url": value} if isinstance(value, str) else value
    if not isinstance(spec, Mapping) or not isinstance(spec.get("url"), str):
        raise InvalidInput(f'content part {i}: image_url needs a string "url"')
    detail = spec.get("detail") or "auto"
    if detail not in DETAILS:
        raise InvalidInput(f"content part {i}: unknown detail {str(detail)[:16]!r}; expected {', '.join(DETAILS)}")
    url = spec["url"]
    if url[:8].lower().startswith(("http://", "https://")):
        return Attachment("image_url", url=url, detail=detail, filename=url.rsplit("/", 1)[-1][:200])
    return Attachment("image_url", _decode(url, i), detail=detail)


def _file_part(value: object, i: int) -> Attachment:
    if not isinstance(value, Mapping):
        raise InvalidInput(f'content part {i}: file needs an object with "file_data"')
    if "file_data" not in value and "file_id" in value:
        raise InvalidInput(f"content part {i}: a file_id names a file uploaded elsewhere; send its file_data")
    name = value.get("filename") or ""
    if not isinstance(value.get("file_data"), str) or not isinstance(name, str):
        raise InvalidInput(f'content part {i}: file needs a base64 or data: URL "file_data"')
    return Attachment("file", _decode(value["file_data"], i), filename=name[:200])


def data_url(url: str) -> tuple[str, str] | None:
    """The MIME type (``""`` when not given) and the base64 payload of a base64 ``data:`` URL; ``None`` for
    any other string. The proxy formats that spell an image as a type and a payload convert with it."""
    match = _DATA_URL.match(url)
    return ((match.group(1) or "").lower(), url[match.end() :]) if match else None


def as_data_url(mime: str, payload: str) -> str:
    """A base64 ``data:`` URL of a type and a base64 payload (``data_url`` read back)."""
    return f"data:{mime};base64,{payload}"


def _decode(url: str, i: int) -> bytes:
    """The bytes of a base64 ``data:`` URL (or of bare base64); ``InvalidInput`` when it is not one."""
    match = _DATA_URL.match(url)
    payload = url[match.end() :] if match else url
    if not match and url[:5].lower() == "data:":
        raise InvalidInput(f"content part {i}: only base64 data: URLs are supported")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput(
            f"content part {i}: not a base64 data: URL or an http(s) URL (other URLs are not fetched)"
        ) from None
    if not data:
        raise InvalidInput(f"content part {i}: the file is empty")
    return data
