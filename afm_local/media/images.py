"""Images through Pillow: open with a pixel limit read from the header (before any decoding), decode in
full (a truncated file fails here, not later), turn upright by its EXIF orientation, make thumbnails.

Only pixels that Pillow decoded reach other libraries (the OCR engine's bundled image codecs are old), and
a thumbnail is re-encoded without any metadata: no EXIF, no GPS position.
"""

from __future__ import annotations

import io
import warnings

from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

from ..core.errors import AttachmentTooLarge, InvalidInput
from ..core.parts import THUMBNAIL_SIDE, MediaInfo, Thumbnail

FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
THUMBNAIL_QUALITY = 80


def inspect(data: bytes, max_pixels: int) -> MediaInfo | None:
    """The image's type and size, or ``None`` when the bytes are no image of an accepted format.
    ``AttachmentTooLarge`` above ``max_pixels``; ``InvalidInput`` when it does not decode."""
    image = _open(data, max_pixels)
    if image is None:
        return None
    try:  # decoded in its own mode (no RGB copy), so that a truncated file fails here
        image.load()
    except (OSError, SyntaxError, ValueError) as exc:
        raise InvalidInput(f"the image is corrupt or truncated: {_first_line(exc)}") from None
    turned = image.getexif().get(ExifTags.Base.Orientation) in (5, 6, 7, 8)  # as exif_transpose turns it
    width, height = (image.height, image.width) if turned else (image.width, image.height)
    return MediaInfo("image", FORMATS[str(image.format)], width, height)


def _open(data: bytes, max_pixels: int) -> Image.Image | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit decides, below
        try:
            image = Image.open(io.BytesIO(data), formats=list(FORMATS))
        except UnidentifiedImageError:
            return None
        except Image.DecompressionBombError:
            raise AttachmentTooLarge(f"the image has more than {max_pixels:,} pixels (a decompression bomb?)") from None
        except (OSError, SyntaxError, ValueError) as exc:
            raise InvalidInput(f"the image cannot be read: {_first_line(exc)}") from None
    if image.width * image.height > max_pixels:
        raise AttachmentTooLarge(
            f"the image is {image.width}×{image.height} pixels; "
            f"the limit is {max_pixels:,} (AFMConfig.max_image_pixels)"
        )
    return image


def decoded(image: Image.Image) -> Image.Image:
    """The image decoded in full, upright, in RGB (transparency on white)."""
    try:
        image.load()
    except (OSError, SyntaxError, ValueError) as exc:
        raise InvalidInput(f"the image is corrupt or truncated: {_first_line(exc)}") from None
    upright = ImageOps.exif_transpose(image)
    if upright.mode in ("RGBA", "LA", "PA") or (upright.mode == "P" and "transparency" in upright.info):
        rgba = upright.convert("RGBA")
        canvas = Image.new("RGB", rgba.size, "white")
        canvas.paste(rgba, mask=rgba.getchannel("A"))
        return canvas
    return upright.convert("RGB")


def load(data: bytes) -> Image.Image:
    """An image already inspected (its size is within the limit): decoded, upright, RGB."""
    image = _open(data, max_pixels=1 << 62)
    if image is None:
        raise InvalidInput("the bytes are not an image")
    return decoded(image)


def thumbnail(image: Image.Image) -> Thumbnail:
    """A JPEG whose longest side is at most ``THUMBNAIL_SIDE``, without metadata. ``image`` is reduced in
    place (no copy of a large image): pass one made for it."""
    small = image
    small.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    small.save(out, "JPEG", quality=THUMBNAIL_QUALITY, optimize=True)
    return Thumbnail(out.getvalue(), small.width, small.height)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
