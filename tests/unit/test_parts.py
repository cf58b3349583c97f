"""Content parts: parsed once by the Turn converter, rendered back as OpenAI parts, counted without base64."""

from __future__ import annotations

import base64

import pytest

from afm_local import AFMConfig, InvalidInput, Turn
from afm_local.core.accounting import TOOL_CALL_OVERHEAD, chat_cost, sent_cost
from afm_local.core.forms import attachment_account, image_parts, image_price
from afm_local.core.parts import Attached, Attachment, MediaInfo, Thumbnail
from afm_local.core.render import Packed, render_chat, render_structured
from afm_local.core.turns import as_turn
from afm_local.core.vocabulary import Fidelity, Importance
from tests.support.fakes import WordCounter

PNG = b"\x89PNG\r\n\x1a\n fake bytes: the core never decodes them"
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_parts_become_one_turn_with_text_and_attachments():
    turn = as_turn(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "the pricing table"},
                {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "low"}},
                {"type": "image_url", "image_url": "https://example.org/cat.png"},
                {"type": "file", "file": {"filename": "a.pdf", "file_data": base64.b64encode(b"%PDF-1.7").decode()}},
                {"type": "text", "text": "and a contract"},
            ],
        }
    )
    assert turn.content == "the pricing table\nand a contract"
    png, cat, pdf = turn.attachments
    assert (png.part, png.data, png.detail, png.is_reference) == ("image_url", PNG, "low", False)
    assert (cat.url, cat.data, cat.filename, cat.is_reference) == ("https://example.org/cat.png", b"", "cat.png", True)
    assert (pdf.part, pdf.data, pdf.filename) == ("file", b"%PDF-1.7", "a.pdf")
    assert as_turn({"role": "user", "content": "plain"}) == Turn("user", "plain")
    stored = as_turn({"role": "user", "content": "from the store", "attachments": (png,)})
    assert stored.attachments == (png,)


@pytest.mark.parametrize(
    ("part", "error"),
    [
        ({"type": "input_audio", "input_audio": {}}, "unsupported type 'input_audio'"),
        ({"type": "image_url", "image_url": {"url": "ftp://x/y.png"}}, "not a base64 data: URL or an http"),
        ({"type": "image_url", "image_url": {"url": "data:image/png,rawbytes"}}, "only base64 data: URLs"),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}, "not a base64"),
        ({"type": "image_url", "image_url": {"url": DATA_URL, "detail": "ultra"}}, "unknown detail 'ultra'"),
        ({"type": "image_url"}, 'needs a string "url"'),
        ({"type": "file", "file": {"file_id": "file-abc"}}, "a file_id names a file uploaded elsewhere"),
        ({"type": "file", "file": {"file_data": "data:application/pdf;base64,"}}, "the file is empty"),
        ("just a string", "unsupported type"),
    ],
)
def test_bad_parts_are_refused_with_one_line(part, error):
    with pytest.raises(InvalidInput, match=error) as caught:
        as_turn({"role": "user", "content": [part]})
    assert "\n" not in str(caught.value)


def attached(reference: bool = False) -> Attached:
    if reference:
        return Attached(Attachment("image_url", url="https://x.org/a.png"), None, "a.png", "", 0, None, 1445, 1445)
    thumb = Thumbnail(b"jpeg", 256, 96)
    return Attached(
        Attachment("image_url", PNG, detail="high"),
        MediaInfo("image", "image/png", 900, 339),
        "image",
        "Team 1 TB $49",
        0,
        thumb,
        425,
        85,
    )


def test_each_form_sends_its_image_parts_and_says_why():
    (full,) = image_parts([attached()], "full")
    assert (full.url, full.detail, full.tokens) == (DATA_URL, "high", 425)
    (thumb,) = image_parts([attached()], "compressed")
    assert thumb.url.startswith("data:image/jpeg;base64,") and (thumb.detail, thumb.tokens) == ("low", 85)
    assert image_parts([attached()], "placeholder") == () == image_parts([attached()], "constraints")
    (ref,) = image_parts([attached(reference=True)], "compressed")  # a URL has no thumbnail: sent as given
    assert ref.url == "https://x.org/a.png" and ref.tokens == 1445
    sent = [
        a["sent"]
        for form in ("full", "compressed", "placeholder", "dropped")
        for a in attachment_account([attached()], form)
    ]
    assert sent == ["original", "thumbnail", "named", "left out"]
    assert "256×96 thumbnail at detail low" in attachment_account([attached()], "compressed")[0]["reason"]


def test_renders_send_content_parts_and_costs_count_text_parts_plus_priced_images():
    counter, config = WordCounter(), AFMConfig()
    images = image_parts([attached()], "compressed")
    packed = [
        Packed("user", Importance.RELEVANT, Fidelity.COMPRESSED, "[image 1: image, 900×339] Team 1 TB", images=images)
    ]
    chat = render_chat(None, packed, "What does Team cost?")
    assert chat[0]["content"][0] == {"type": "text", "text": "[image 1: image, 900×339] Team 1 TB"}
    assert chat[0]["content"][1]["image_url"]["detail"] == "low"
    # the base64 is never counted: text words + the image's published price, looked up among the parts made
    assert (
        sent_cost(counter, chat, config, image_price(images))
        == sent_cost(counter, [{"role": "user", "content": "[image 1: image, 900×339] Team 1 TB"}, chat[1]], config)
        + 85
    )
    with pytest.raises(ValueError, match="image_price"):  # an image part is never counted as free
        sent_cost(counter, chat, config)
    structured = render_structured(None, packed, "What does Team cost?", "en")
    assert [m["role"] for m in structured] == ["system", "user", "user"]
    assert "[image 1: image, 900×339] Team 1 TB" in structured[0]["content"]  # the block lists the attachment
    assert structured[1]["content"][1]["image_url"]["url"].startswith("data:image/jpeg")


def test_only_a_user_turn_carries_images_and_a_tool_call_or_result_carries_text():
    image = {"type": "image_url", "image_url": {"url": DATA_URL}}
    call = {"id": "c1", "name": "shot", "arguments": "{}"}
    for turn in (
        {"role": "assistant", "content": [image]},
        {"role": "system", "content": [image]},
        {"role": "assistant", "content": [image], "tool_calls": [call]},
        {"role": "tool", "content": [{"type": "text", "text": "ok"}, image], "tool_call_id": "c1"},
    ):
        with pytest.raises(InvalidInput, match="only a user message may carry images and files"):
            as_turn(turn)
    result = as_turn({"role": "tool", "content": [{"type": "text", "text": "18C"}], "tool_call_id": "c1"})
    assert (result.content, result.tool_call_id, result.attachments) == ("18C", "c1", ())


def test_one_chat_cost_counts_text_tool_calls_and_images():
    counter, config = WordCounter(), AFMConfig()
    images = image_parts([attached()], "full")
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "Paris"}}
    words = {"role": "user", "content": "two words"}
    with_image = {"role": "user", "content": [{"type": "text", "text": "two words"}, images[0].to_openai()]}
    calling = {"role": "assistant", "content": "two words", "tool_calls": [call]}
    base = chat_cost(counter, words, config)
    assert base == 2 + config.per_message_overhead
    assert chat_cost(counter, with_image, config, image_price(images)) == base + 425
    assert chat_cost(counter, calling, config) == base + 3 + TOOL_CALL_OVERHEAD  # the call's id, name, arguments
    result = {"role": "tool", "content": "two words", "tool_call_id": "c1"}
    assert chat_cost(counter, result, config) == base + 1  # the id of the call it answers


def test_a_message_with_images_renders_beside_a_tool_unit_and_keeps_the_order():
    unit = (
        as_turn({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f"}]}),
        as_turn({"role": "tool", "content": "ok", "tool_call_id": "c1"}),
    )
    images = image_parts([attached()], "compressed")
    packed = [
        Packed("user", Importance.RELEVANT, Fidelity.COMPRESSED, "the table", images=images),
        Packed("assistant", Importance.RELEVANT, Fidelity.FULL, "f() -> ok", turns=unit),
        Packed("user", Importance.RELEVANT, Fidelity.PLACEHOLDER, "[Turn 4 · user: receipt image]"),
    ]
    chat = render_chat(None, packed, "q?")
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "user", "user"]
    assert chat[0]["content"][1]["image_url"]["detail"] == "low" and chat[1]["tool_calls"][0]["id"] == "c1"
    assert chat[3]["content"] == "[Turn 4 · user: receipt image]"  # a placeholder sends no image
