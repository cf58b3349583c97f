"""Content parts: parsed once by the Turn converter, rendered back as OpenAI parts, counted without base64."""

from __future__ import annotations

import base64

import pytest

from afm_local import AFMConfig, InvalidInput, Turn
from afm_local.core.accounting import sent_cost
from afm_local.core.forms import attachment_account, image_parts
from afm_local.core.parts import Attached, Attachment, MediaInfo, Thumbnail
from afm_local.core.render import Packed, render_chat, render_structured
from afm_local.core.turns import as_turn
from afm_local.core.types import Fidelity, Importance
from tests.support.fakes import WordCounter

PNG = b"\x89PNG\r\n\x1a\n fake bytes: the core never decodes them"
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_parts_become_one_turn_with_text_and_attachments():
    turn = as_turn({"role": "user", "content": [
        {"type": "text", "text": "the pricing table"},
        {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "low"}},
        {"type": "image_url", "image_url": "https://example.org/cat.png"},
        {"type": "file", "file": {"filename": "a.pdf", "file_data": base64.b64encode(b"%PDF-1.7").decode()}},
        {"type": "text", "text": "and a contract"},
    ]})
    assert turn.content == "the pricing table\nand a contract"
    png, cat, pdf = turn.attachments
    assert (png.part, png.data, png.detail, png.is_reference) == ("image_url", PNG, "low", False)
    assert (cat.url, cat.data, cat.filename, cat.is_reference) == ("https://example.org/cat.png", b"", "cat.png", True)
    assert (pdf.part, pdf.data, pdf.filename) == ("file", b"%PDF-1.7", "a.pdf")
    assert as_turn({"role": "user", "content": "plain"}) == Turn("user", "plain")
    stored = as_turn({"role": "user", "content": "from the store", "attachments": (png,)})
    assert stored.attachments == (png,)


@pytest.mark.parametrize(("part", "error"), [
    ({"type": "input_audio", "input_audio": {}}, "unsupported type 'input_audio'"),
    ({"type": "image_url", "image_url": {"url": "ftp://x/y.png"}}, "not a base64 data: URL or an http"),
    ({"type": "image_url", "image_url": {"url": "data:image/png,rawbytes"}}, "only base64 data: URLs"),
    ({"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}, "not a base64"),
    ({"type": "image_url", "image_url": {"url": DATA_URL, "detail": "ultra"}}, "unknown detail 'ultra'"),
    ({"type": "image_url"}, 'needs a string "url"'),
    ({"type": "file", "file": {"file_id": "file-abc"}}, "a file_id names a file uploaded elsewhere"),
    ({"type": "file", "file": {"file_data": "data:application/pdf;base64,"}}, "the file is empty"),
    ("just a string", "unsupported type"),
])
def test_bad_parts_are_refused_with_one_line(part, error):
    with pytest.raises(InvalidInput, match=error) as caught:
        as_turn({"role": "user", "content": [part]})
    assert "\n" not in str(caught.value)


def attached(reference: bool = False) -> Attached:
    if reference:
        return Attached(Attachment("image_url", url="https://x.org/a.png"), None, "a.png", "", 0, None, 1445, 1445)
    thumb = Thumbnail(b"jpeg", 256, 96)
    return Attached(Attachment("image_url", PNG, detail="high"), MediaInfo("image", "image/png", 900, 339),
                    "image", "Team 1 TB $49", 0, thumb, 425, 85)


def test_each_form_sends_its_image_parts_and_says_why():
    full, = image_parts([attached()], "full")
    assert (full.url, full.detail, full.tokens) == (DATA_URL, "high", 425)
    thumb, = image_parts([attached()], "compressed")
    assert thumb.url.startswith("data:image/jpeg;base64,") and (thumb.detail, thumb.tokens) == ("low", 85)
    assert image_parts([attached()], "placeholder") == () == image_parts([attached()], "constraints")
    ref, = image_parts([attached(reference=True)], "compressed")  # a URL has no thumbnail: sent as given
    assert ref.url == "https://x.org/a.png" and ref.tokens == 1445
    sent = [a["sent"] for form in ("full", "compressed", "placeholder", "dropped")
            for a in attachment_account([attached()], form)]
    assert sent == ["original", "thumbnail", "named", "left out"]
    assert "256×96 thumbnail at detail low" in attachment_account([attached()], "compressed")[0]["reason"]


def test_renders_send_content_parts_and_costs_count_text_parts_plus_priced_images():
    counter, config = WordCounter(), AFMConfig()
    images = image_parts([attached()], "compressed")
    packed = [Packed("user", Importance.RELEVANT, Fidelity.COMPRESSED, "[image 1: image, 900×339] Team 1 TB", images)]
    chat = render_chat(None, packed, "What does Team cost?")
    assert chat[0]["content"][0] == {"type": "text", "text": "[image 1: image, 900×339] Team 1 TB"}
    assert chat[0]["content"][1]["image_url"]["detail"] == "low"
    # the base64 is never counted: text words + the image's published price
    assert sent_cost(counter, chat, config, 85) == sent_cost(
        counter, [{"role": "user", "content": "[image 1: image, 900×339] Team 1 TB"}, chat[1]], config) + 85
    structured = render_structured(None, packed, "What does Team cost?", "en")
    assert [m["role"] for m in structured] == ["system", "user", "user"]
    assert "[image 1: image, 900×339] Team 1 TB" in structured[0]["content"]  # the block lists the attachment
    assert structured[1]["content"][1]["image_url"]["url"].startswith("data:image/jpeg")
