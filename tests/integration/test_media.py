"""Images and documents through the real reader (Pillow, PDFium, Tesseract) and the real engine: the
fixtures are real screenshots, PDFs and photos made offline; nothing here is mocked."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from afm_local import AFMConfig, FocusManager, InvalidInput, file_part
from afm_local.core.errors import AttachmentTooLarge, UnsupportedAttachment
from afm_local.core.parts import MediaLimits
from afm_local.local.components import media_reader
from tests.support.media import MEDIA, data, fixtures, image_part, text
from tests.support.real import installed, shared_components

LIMITS = AFMConfig().media_limits
READER = media_reader()
needs_ocr = pytest.mark.skipif(
    not READER.reads_text,
    reason="Tesseract data not installed: apt-get install "
    "tesseract-ocr-eng tesseract-ocr-rus (scripts/test.sh does, as root)",
)
needs_models = pytest.mark.skipif(not installed("multilingual-e5-small"), reason="run `afm-local models install`")


@pytest.mark.parametrize(
    ("name", "kind", "mime"),
    [
        ("png/pricing_en.png", "image", "image/png"),
        ("png/chat_ru.chat.jpg", "image", "image/jpeg"),
        ("pdf/agreement_en.pdf", "pdf", "application/pdf"),
        ("html/contract_en.html", "text", "text/plain"),
        ("bad/not_really.png", "text", "text/plain"),  # a name says nothing: the bytes are text
    ],
)
def test_the_type_comes_from_the_bytes(name, kind, mime):
    info = READER.inspect(data(name), LIMITS)
    assert (info.kind, info.mime) == (kind, mime)


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("bad/empty.pdf", InvalidInput, "the file is empty"),
        ("bad/encrypted.pdf", InvalidInput, "encrypted"),
        ("bad/truncated.pdf", InvalidInput, "corrupt or not a PDF"),
        ("bad/bomb_40000x40000.png", AttachmentTooLarge, "pixels"),
        ("bad/bomb_12000x12000.png", AttachmentTooLarge, "12000×12000 pixels; the limit is 40,000,000"),
    ],
)
def test_bad_files_are_refused_before_anything_is_decoded(name, error, message):
    with pytest.raises(error, match=message):
        READER.inspect(data(name), LIMITS)


def test_limits_are_the_configured_ones():
    with pytest.raises(AttachmentTooLarge, match="13,748 bytes; the limit is 1,000"):
        READER.inspect(data("png/pricing_en.png"), MediaLimits(1000, 10**9, 10))
    with pytest.raises(AttachmentTooLarge, match="900×339 pixels"):
        READER.inspect(data("png/pricing_en.png"), MediaLimits(10**9, 1000, 10))
    with pytest.raises(AttachmentTooLarge, match="3 pages; the limit is 2"):
        READER.inspect(data("pdf/agreement_en.pdf"), MediaLimits(10**9, 10**9, 2))
    with pytest.raises(UnsupportedAttachment, match="not a PNG, JPEG, WebP or GIF image, a PDF, or UTF-8 text"):
        READER.inspect(b"PK\x03\x04\x00\xff\xfe binary zip", LIMITS)


def test_thumbnails_are_small_jpegs_without_metadata():
    for name in ("bad/with_exif_gps.jpg", "png/slide_en.png", "pdf/agreement_ru.pdf", "photo/astronaut.jpg"):
        thumb = READER.thumbnail(data(name))
        image = Image.open(io.BytesIO(thumb.data))
        assert image.format == "JPEG" and max(image.size) <= 256 and image.size == (thumb.width, thumb.height)
        assert not image.getexif() and "exif" not in image.info, name
    assert Image.open(io.BytesIO(data("bad/with_exif_gps.jpg"))).getexif()  # the source had EXIF (and GPS)


def test_documents_give_their_text_and_pages():
    for lang in ("en", "ru"):
        truth = fixtures()[f"pdf/agreement_{lang}.pdf"]
        pdf = data(f"pdf/agreement_{lang}.pdf")
        assert READER.pages(pdf) == truth["pages"] == 3
        got = " ".join(READER.document_text(pdf).split())
        assert all(fact in got for fact in truth["key_facts"]), truth["key_facts"]


@needs_ocr
@pytest.mark.parametrize(
    "name", [f"png/{p}_{lang}.png" for p in ("pricing", "contract", "slide") for lang in ("en", "ru")]
)
def test_ocr_reads_english_and_russian_screenshots(name):
    truth = fixtures()[name]
    got = "".join(READER.ocr(data(name)).split())  # digit groups ("3 900") may lose their thin space
    assert all("".join(fact.split()) in got for fact in truth["key_facts"]), (truth["key_facts"], got[:300])
    assert READER.ocr(data("photo/coffee.jpg")) == ""  # a photo without text gives none


@pytest.fixture(scope="module")
def components():
    if not installed("multilingual-e5-small"):
        pytest.skip("run `afm-local models install`")
    return shared_components()


def tiers(fm: FocusManager, query: str, index: int, budgets: range) -> dict[str, dict]:
    """The message sent for history message ``index`` at every fidelity seen over ``budgets``."""
    seen = {}
    for budget in budgets:
        ctx = fm.build_context(query, budget)
        assert ctx.tokens_used <= budget
        item = ctx.items[index]
        if item.fidelity.value not in seen and item.fidelity.value != "dropped":
            sent = [m for m in ctx.messages[:-1] if m["role"] == "user"]
            seen[item.fidelity.value] = {"item": item, "messages": sent}
    return seen


@needs_models
def test_an_image_and_a_pdf_come_back_at_each_tier(components):
    fm = FocusManager(components=components)
    fm.add_message(
        "user", [text("our pricing table screenshot"), image_part("png/pricing_en.png", "high")], importance="RELEVANT"
    )
    fm.add_message("assistant", "Thanks, I have the table. The Team plan looks like the best fit for you.")
    fm.add_message(
        "user", [text("and the agreement"), file_part(MEDIA / "pdf/agreement_en.pdf")], importance="RELEVANT"
    )
    fm.add_message("assistant", "Got it. I will check the agreement against the pricing.")
    image, pdf = fm.messages[0], fm.messages[2]
    assert image.attachments[0].tokens_full == 425 and image.attachments[0].tokens_thumbnail == 85
    assert image.tokens_full > image.tokens_compressed > image.tokens_placeholder
    assert pdf.attachments[0].pages == 3 and pdf.placeholder.startswith("[Turn 3 · user: agreement")

    seen = tiers(fm, "What does the Team plan cost per month?", 0, range(60, 1400, 20))
    assert set(seen) == {"full", "compressed", "placeholder"}, set(seen)
    full = seen["full"]["messages"][0]["content"]
    assert full[1]["image_url"]["url"].startswith("data:image/png;base64,") and full[1]["image_url"]["detail"] == "high"
    compressed = seen["compressed"]["messages"][0]["content"]
    assert compressed[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert compressed[1]["image_url"]["detail"] == "low"
    assert "thumbnail at detail low" in seen["compressed"]["item"].reason
    assert re.fullmatch(r"\[Turn 1 · user: [^\]]+\]", seen["placeholder"]["messages"][0]["content"])
    assert seen["placeholder"]["item"].attachments[0]["sent"] == "named"

    seen = tiers(fm, "When must the data migration report be delivered?", 2, range(60, 1400, 20))
    # every sentence of the agreement states a fact, so the extractive compressor keeps them all: its
    # compressed form (the same text and a thumbnail) is no cheaper, and the packer sends it Full instead
    assert pdf.compressed.text == pdf.content and pdf.tokens_compressed > pdf.tokens_full
    assert set(seen) == {"full", "placeholder"}, set(seen)
    assert "15\nOctober 2025" in seen["full"]["item"].text or "15 October 2025" in seen["full"]["item"].text
    assert "sent as its text" in seen["full"]["item"].reason


@needs_models
@needs_ocr
def test_a_contract_screenshot_is_read_embedded_and_its_tag_pins_it(components):
    fm = FocusManager(components=components)
    pinned = fm.add_message("user", [text("[!] the contract, see the deadline"), image_part("png/contract_en.png")])
    assert (
        pinned.importance.value == "CRITICAL"
        and pinned.pinned
        and "15 October 2025" in " ".join(pinned.content.split())
    )
    for i in range(12):
        fm.add_message(
            "assistant" if i % 2 else "user", f"Small talk about the weather in Lisbon, part {i}, nothing more."
        )
    ctx = fm.build_context("When is the report due?", 900)
    first = next(m for m in ctx.messages if isinstance(m["content"], list))
    assert "15 October 2025" in " ".join(first["content"][0]["text"].split()) and ctx.items[0].fidelity.value == "full"
    assert ctx.tokens_used <= 900


@needs_models
def test_urls_are_never_fetched_and_are_sent_as_given_or_named(components, no_network):
    fm = FocusManager(components=components)
    url = {"url": "https://example.org/venue.jpg", "detail": "low"}
    ref = fm.add_message("user", [text("a photo of the venue"), {"type": "image_url", "image_url": url}])
    attached = ref.attachments[0]
    assert attached.thumbnail is None and attached.tokens_thumbnail == attached.tokens_full == 85  # low: 85 tokens
    fm.add_message("assistant", "Looks lovely.")
    forms = set()
    for budget in range(20, 300, 10):
        ctx = fm.build_context("Where is the venue?", budget)
        forms.add(ctx.items[0].fidelity.value)
        for m in ctx.messages:  # the image, whenever it is sent, is the URL as given, never a thumbnail
            if isinstance(m["content"], list):
                assert m["content"][1] == {"type": "image_url", "image_url": url}
    assert {"full", "placeholder"} <= forms


@needs_models
def test_bad_input_through_the_api_stores_nothing(components):
    fm = FocusManager(components=components)
    for part, error in (
        (file_part(MEDIA / "bad/encrypted.pdf"), "encrypted"),
        (image_part("bad/bomb_12000x12000.png"), "pixels"),
        (image_part("pdf/agreement_en.pdf", mime="image/png"), "image_url part holds a PDF"),
    ):
        with pytest.raises(InvalidInput, match=error):
            fm.add_message("user", [text("see attached"), part])
    assert fm.messages == []
    with pytest.raises(AttachmentTooLarge, match="a message has 2 attachments; the limit is 1"):
        FocusManager(AFMConfig(max_attachments=1), components=components).add_message(
            "user", [image_part("photo/coffee.jpg"), image_part("photo/chelsea.jpg")]
        )


@needs_models
@needs_ocr
def test_a_screenshot_of_a_contract_is_critical_by_the_same_classifier(components):
    fm = FocusManager(components=components)
    for lang in ("en", "ru"):  # no tag: the OCR text (a deadline, a budget cap) is what the classifier reads
        message = fm.add_message("user", [image_part(f"png/contract_{lang}.png")])
        assert message.importance.value == "CRITICAL" and message.importance_source == "model", lang
    assert fm.add_message("user", [image_part("photo/coffee.jpg", mime="image/jpeg")]).importance.value != "CRITICAL"


@needs_models
def test_without_ocr_data_images_still_work_by_caption_and_name(components, tmp_path, caplog):
    import dataclasses

    with caplog.at_level("WARNING", logger="afm_local"):
        reader = media_reader(tmp_path)  # a folder without eng/rus.traineddata
    assert not reader.reads_text and reader.name == "media+no-ocr"
    assert "OCR is off" in caplog.text and "apt-get install tesseract-ocr-eng tesseract-ocr-rus" in caplog.text
    fm = FocusManager(components=dataclasses.replace(components, media=reader))
    message = fm.add_message("user", [text("pricing table screenshot"), image_part("png/pricing_en.png")])
    assert message.content == "pricing table screenshot\n\n[image 1: image, 900×339]"  # no OCR text
    assert message.attachments[0].thumbnail is not None and message.attachments[0].tokens_full == 425
    assert message.placeholder == "[Turn 1 · user: pricing table screenshot image]"
