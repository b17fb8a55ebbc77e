import pytest

from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.text_decoding import decode_text


def test_utf8_is_decoded_with_the_bom_dropped_and_line_endings_normalized() -> None:
    assert decode_text(b"\xef\xbb\xbfcaf\xc3\xa9\r\nnext\rlast") == "café\nnext\nlast"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"text\x00more", "binary file, not text"),
        (b"caf\xe9", "not valid UTF-8 (byte 3)"),
        (b"\xef\xbb\xbfcaf\xe9", "not valid UTF-8 (byte 6)"),
        (b" \r\n\t", "empty file"),
    ],
)
def test_unreadable_text_says_why(raw: bytes, reason: str) -> None:
    with pytest.raises(UnreadableFileError) as caught:
        decode_text(raw)
    assert caught.value.reason == reason


def test_a_fallback_encoding_is_tried_only_for_bytes_that_are_not_utf8() -> None:
    assert decode_text("café".encode("latin-1"), "iso-8859-1") == "café"
    assert decode_text("café".encode(), "iso-8859-1") == "café"
    with pytest.raises(UnreadableFileError, match="charset 'klingon' is unknown"):
        decode_text(b"caf\xe9", "klingon")
