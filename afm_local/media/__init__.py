"""Images and documents: Pillow, PDFium and Tesseract work behind ``core.protocols.MediaReader``.

This layer sits beside ``text/`` and imports only ``core``: ``reader.LocalMediaReader`` sniffs the type from
the bytes and checks the limits before anything is decoded, makes thumbnails, reads documents and, when an
OCR engine is given (``afm_local.local`` wires Tesseract), the text in images. ``file_part`` turns a file
on disk into the OpenAI content part that ``add_message`` takes (without importing Pillow).
"""

from .files import file_part

__all__ = ["file_part"]
