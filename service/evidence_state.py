"""The CLI's evidence session file: the scope and what was read, so ``agrag evidence check`` knows what was fetched."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agrag.components.data_models.evidence import EvidenceLocation, EvidenceScope, FetchedEvidence
from agrag.components.errors import EvidenceError

FORMAT = 1


def load_session(path: Path | None, documents: list[str] | None) -> tuple[EvidenceScope, list[FetchedEvidence]]:
    """The scope and the evidence read so far; a new file takes the scope given by ``--document``.

    Raises:
        EvidenceError: the file is unreadable, or ``--document`` asks for another scope than the file's (a session's
            scope is fixed once).
    """
    asked = EvidenceScope(tuple(documents)) if documents else EvidenceScope()
    if path is None or not path.exists():
        return asked, []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        scope = EvidenceScope(None if data["scope"] is None else tuple(data["scope"]))
        fetched = [_fetched(item) for item in data["fetched"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvidenceError(
            f"The session file {path} is not one agrag wrote ({exc}). Delete it or name another with --session."
        ) from exc
    if documents and asked != scope:
        raise EvidenceError(
            f"The session {path} is scoped to {_scope_text(scope)}; a session's scope is fixed when it starts. "
            "Leave out --document, or start a new session file."
        )
    return scope, fetched


def save_session(path: Path | None, scope: EvidenceScope, fetched: dict[str, FetchedEvidence]) -> None:
    """Write the session (nothing without a path)."""
    if path is None:
        return
    payload = {
        "format": FORMAT,
        "scope": None if scope.document_ids is None else list(scope.document_ids),
        "fetched": [asdict(item) for item in fetched.values()],
    }
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")


def _fetched(item: dict[str, Any]) -> FetchedEvidence:
    where = item["location"]
    location = EvidenceLocation(where["title"], tuple(where["heading_path"]), where["start"], where["end"])
    return FetchedEvidence(item["id"], item["text"], location, item["current"], item["partial"])


def _scope_text(scope: EvidenceScope) -> str:
    return "every document" if scope.document_ids is None else ", ".join(scope.document_ids) or "no document"
