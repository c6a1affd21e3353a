"""Images in the conversation model: a tool result's ``images``, the
``to_dict`` / ``from_dict`` round trip and the fast converter."""

from __future__ import annotations

import pytest

from panto.conversation import (
    Image,
    Message,
    Text,
    ToolResultBlock,
    fast_message_from_dict,
    message_from_dict,
)

A = Image("image/png", "iVBORw0KGgo=")
B = Image("image/webp", "UklGRgAAAABXRUJQ")


def test_tool_result_images_round_trip_exactly() -> None:
    msg = Message(
        "tool",
        (ToolResultBlock("c1", "two", False, [A, B]), ToolResultBlock("c2", "none", True)),
    )
    assert msg.content[0].images == (A, B)  # a list becomes a tuple
    d = msg.to_dict()
    assert d["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "c1",
            "content": "two",
            "is_error": False,
            "images": [
                {"type": "image", "media_type": "image/png", "data": A.data_b64},
                {"type": "image", "media_type": "image/webp", "data": B.data_b64},
            ],
        },
        # no images: no key, as entries written before images were kept
        {"type": "tool_result", "tool_use_id": "c2", "content": "none", "is_error": True},
    ]
    assert Message.from_dict(d) == msg
    assert Message.from_dict(d).to_dict() == d


def test_the_fast_converter_handles_images() -> None:
    assert fast_message_from_dict is not Message.from_dict  # still on
    for msg in (
        Message("tool", (ToolResultBlock("c1", "x", False, (A, B)),)),
        Message("user", (Text("look"), A)),
        Message("user", (A,)),
    ):
        d = msg.to_dict()
        assert fast_message_from_dict(d) == msg == Message.from_dict(d)
        assert type(fast_message_from_dict(d).content[0]) is type(msg.content[0])
    d = {
        "role": "tool",
        "content": [
            {"type": "tool_result", "tool_use_id": "c", "content": "", "images": []},
        ],
    }
    assert message_from_dict(d) == Message("tool", (ToolResultBlock("c", ""),))


@pytest.mark.parametrize(
    "images",
    [
        [{"type": "text", "text": "not an image"}],
        [{"type": "image", "media_type": "image/png"}],
        "QUFB",
    ],
)
def test_a_bad_image_in_a_tool_result_is_an_error(images: object) -> None:
    d = {
        "role": "tool",
        "content": [
            {"type": "tool_result", "tool_use_id": "c", "content": "", "images": images},
        ],
    }
    with pytest.raises((KeyError, ValueError, AttributeError, TypeError)):
        fast_message_from_dict(d)
    with pytest.raises((KeyError, ValueError, AttributeError, TypeError)):
        message_from_dict(d)
