"""``PhaseKey``: names one finished piece of ingestion work in the phase journal."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

GRAPH_SUBJECT = "graph"


@dataclass(frozen=True, slots=True)
class PhaseKey:
    """A phase of ingestion done for one subject under one configuration.

    Attributes:
        subject: What the work was done for: one document version (``document_subject``), one batch of document
            versions (``batch_subject``), or the whole graph (``GRAPH_SUBJECT``).
        phase: The phase's name (chunk, extract, embed, resolve, ...).
        config_hash: A hash of every setting the phase's output depends on; other settings mean other work.
    """

    subject: str
    phase: str
    config_hash: str


def document_subject(document_id: str, version: str) -> str:
    """The subject of work done for one version of one document."""
    return f"doc:{document_id}@{version}"


def batch_subject(versions: Sequence[tuple[str, str]]) -> str:
    """The subject of work done for a set of document versions together (resolution, the write)."""
    digest = hashlib.sha256(json.dumps(sorted(versions)).encode("utf-8")).hexdigest()
    return f"batch:{digest[:16]}"


def config_hash(*parts: str) -> str:
    """A short hash of configuration texts (each a settings model dumped as JSON)."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]
