"""What each fidelity sends of a message's images and documents, and why (the render's and the account's
one rule): the block that names an attachment in its message's text, the image parts of each form, and
each attachment's line in a context item's account.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .parts import Attached, Detail


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image part of a rendered message and what it costs the target model."""

    url: str
    detail: Detail
    tokens: int

    def to_openai(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.url, "detail": self.detail}}


def image_price(images: Iterable[ImagePart]) -> Callable[[Mapping[str, Any]], int]:
    """The price of each of ``images`` once rendered (``core.accounting.chat_cost``), looked up by its URL and
    detail; a part that is none of them raises ``KeyError``."""
    table = {(image.url, image.detail): image.tokens for image in images}
    return lambda part: table[(part["image_url"]["url"], part["image_url"]["detail"])]


def attachment_block(number: int, attached: Attached) -> str:
    """The line that introduces an attachment in its message's text, followed by its text if any: the
    text that is embedded, classified, compressed and sent with it."""
    info, pages = attached.info, attached.pages
    if info is None:
        head = f"[image {number}: {attached.name}, by reference]"
    elif info.kind == "image":
        head = f"[image {number}: {attached.name}, {info.width}×{info.height}]"
    elif info.kind == "pdf":
        head = f"[document {number}: {attached.name}, {pages} page{'s' if pages != 1 else ''}]"
    else:
        head = f"[file {number}: {attached.name}]"
    return head + ("\n" + attached.text.strip() if attached.text.strip() else "")


AttachmentForm = Literal["full", "compressed", "constraints", "placeholder", "dropped"]


def image_parts(attached: Sequence[Attached], form: AttachmentForm) -> tuple[ImagePart, ...]:
    """The image parts a message sends with its text in ``form``: Full sends each image as given (a
    document goes as its text alone); Compressed sends thumbnails at ``detail: low`` (a URL, which has
    none, as given); the constraint sentences, a placeholder and a dropped message send none."""
    parts = []
    for a in attached:
        if form == "full" and (a.info is None or a.info.kind == "image"):
            parts.append(ImagePart(_original_url(a), a.source.detail, a.tokens_full))
        elif form == "compressed" and a.info is None:
            parts.append(ImagePart(a.source.url, a.source.detail, a.tokens_full))
        elif form == "compressed" and a.thumbnail is not None:
            parts.append(ImagePart(a.thumbnail.data_url, "low", a.tokens_thumbnail))
    return tuple(parts)


def _original_url(a: Attached) -> str:
    if a.info is None:
        return a.source.url
    return f"data:{a.info.mime};base64," + base64.b64encode(a.source.data).decode("ascii")


def attachment_account(attached: Sequence[Attached], form: AttachmentForm) -> tuple[dict[str, object], ...]:
    """How each attachment of a message was sent in ``form``, and why: a context item's account."""
    return tuple(_account(a, form) for a in attached)


def _account(a: Attached, form: AttachmentForm) -> dict[str, object]:
    document = a.info is not None and a.info.kind != "image"
    if form == "full":
        sent, tokens = ("text", 0) if document else ("reference" if a.info is None else "original", a.tokens_full)
        why = "sent as its text" if document else "sent as given"
        why += ", by URL (never fetched)" if a.info is None else ""
    elif form == "compressed" and a.info is None:
        sent, tokens, why = "reference", a.tokens_full, "sent as given: a URL is never fetched, so it has no thumbnail"
    elif form == "compressed" and a.thumbnail is not None:
        sent, tokens = "thumbnail", a.tokens_thumbnail
        why = f"a {a.thumbnail.width}×{a.thumbnail.height} thumbnail at detail low, with the summary of its text"
    elif form == "compressed":
        sent, tokens, why = "text", 0, "its text summarised"
    elif form == "constraints":
        sent, tokens, why = "text", 0, "only its constraint sentences, verbatim, and no image"
    else:
        sent, tokens = ("named", 0) if form == "placeholder" else ("left out", 0)
        why = "named in the placeholder line" if form == "placeholder" else "left out with its message"
    return {"name": a.name, "kind": a.kind, "sent": sent, "tokens": tokens, "reason": f"{a.name}: {why}"}
