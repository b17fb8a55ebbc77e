r"""``DocumentIdText``: a document id in a request, refused where the request is read if it is not text.

JSON can escape half of a UTF-16 pair (``"\udcff"``); Python decodes it to a lone surrogate, which names no
character and has no UTF-8. Such an id reached Kùzu, which cannot bind it, and the request failed with 500; as a
field type it is a 422 (HTTP) or an invalid-arguments error (MCP) that names the field.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _text(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "a document id holds a lone surrogate (an escape such as \\udcff that is no character): send the id "
            "as `agrag documents` or list_documents shows it"
        ) from None
    return value


DocumentIdText = Annotated[str, AfterValidator(_text)]
"""A document id as text: any string that is valid Unicode (a lone surrogate is refused)."""
