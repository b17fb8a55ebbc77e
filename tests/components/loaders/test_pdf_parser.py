import io

import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.pdf_parser import parse_pdf


def _pdf(*pages: str, title: str | None = None) -> bytes:
    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for page in pages:
        pdf.add_page()
        for line in page.splitlines():
            pdf.cell(text=line)
            pdf.ln()
    return bytes(pdf.output())


def _encrypted(raw: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(raw)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pages_are_joined_by_blank_lines_and_the_metadata_title_wins() -> None:
    parsed = parse_pdf(_pdf("Maria Chen wrote the Orion Planner.\nSecond line   ", "Page two.", title="Orion"), "f")
    assert parsed.text == "Maria Chen wrote the Orion Planner.\nSecond line\n\nPage two."
    assert parsed.title == "Orion"
    assert parsed.headings == () and parsed.tables == ()


def test_without_a_metadata_title_the_stem_is_the_title() -> None:
    assert parse_pdf(_pdf("Text."), "report").title == "report"


def test_a_pdf_locked_only_by_an_owner_password_is_read() -> None:
    assert parse_pdf(_encrypted(_pdf("Open text."), user_password=""), "f").text == "Open text."


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "empty file"),
        (b"hello, not a pdf", "not a readable PDF: no %PDF- header"),
        (b"%PDF-1.7\n garbage", "not a readable PDF: "),
        (_encrypted(_pdf("Secret."), user_password="secret"), "encrypted PDF; decrypt it first"),
        (_pdf(""), "no extractable text (a scanned PDF? run OCR first)"),
    ],
)
def test_unreadable_pdfs_say_why(raw: bytes, reason: str) -> None:
    with pytest.raises(UnreadableFileError) as caught:
        parse_pdf(raw, "f")
    assert caught.value.reason.startswith(reason)
