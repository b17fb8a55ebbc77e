"""The pruned report's hint: the ontology call and command that keep what was dropped, and the documents to re-extract.

The ``set_ontology`` arguments and the ``agrag ontology add`` command grow the ontology; ``agrag reextract`` then
re-extracts the documents the dropped labels and patterns came from.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, replace

from agrag.components.data_models.ontology import OntologyHint, PrunedReport, relation_type_name
from agrag.components.data_models.ontology_additions import WILDCARD
from agrag.pipelines.ontology_changes import UNTYPED_LABELS, valid_name


def _side(label: str) -> str:
    """An untyped endpoint (``Name``...) is matched only by ``'*'``."""
    return WILDCARD if not label or label in UNTYPED_LABELS else label


@dataclass(frozen=True, slots=True)
class _Keepable:
    labels: list[str]
    patterns: list[tuple[str, str, str]]
    skipped: list[str]
    documents: set[str]


def _keepable(pruned: PrunedReport) -> _Keepable:
    """What set_ontology would take (labels, patterns), what it would not, and the documents to re-extract."""
    skipped: list[str] = []
    documents: set[str] = set()
    labels = [d.label for d in pruned.dropped_labels if valid_name(d.label)]
    skipped += [f"label {d.label!r} (not a valid name)" for d in pruned.dropped_labels if not valid_name(d.label)]
    documents.update(doc for d in pruned.dropped_labels if valid_name(d.label) for doc in d.documents)
    patterns: list[tuple[str, str, str]] = []
    for p in pruned.undeclared_patterns:
        # A predicate phrase (``studied at``) is declared in the ontology's spelling, which matches it (``STUDIED_AT``).
        rel_type = p.type if valid_name(p.type) and not p.type.islower() else relation_type_name(p.type)
        pattern = (rel_type, _side(p.source_label), _side(p.target_label))
        bad = [name for name in pattern if name != WILDCARD and not valid_name(name)]
        if bad:
            skipped.append(f"relation ({p.source_label})-[{p.type}]->({p.target_label}) ({bad[0]!r}: not a valid name)")
            continue
        documents.update(p.documents)
        if pattern not in patterns:
            patterns.append(pattern)
    return _Keepable(labels, patterns, skipped, documents)


def keep_hint(pruned: PrunedReport) -> OntologyHint | None:
    """How to keep the labels and relation patterns ``pruned`` dropped; None when it dropped none.

    Relations dropped only because an endpoint was never extracted as an entity need no ontology change, so they
    are not in the hint. A dropped name that ``set_ontology`` would refuse (not a plain name) is listed in
    ``skipped`` instead.
    """
    keep = _keepable(pruned)
    labels, patterns, skipped = keep.labels, keep.patterns, keep.skipped
    if not labels and not patterns:
        return OntologyHint("", "", tuple(skipped)) if skipped else None
    arguments: dict[str, object] = {}
    if labels:
        arguments["labels"] = [{"label": label} for label in labels]
    if patterns:
        arguments["relations"] = [{"type": t, "source": s, "target": d} for t, s, d in patterns]
    words = ["agrag", "ontology", "add"]
    for label in labels:
        words += ["--label", label]
    for t, s, d in patterns:
        words += ["--relation", f"{t}:{s}:{d}"]
    documents = tuple(sorted(keep.documents))
    reextract = shlex.join(["agrag", "reextract", *documents]) if documents else ""
    return OntologyHint(
        json.dumps(arguments, ensure_ascii=False), shlex.join(words), tuple(skipped), documents, reextract
    )


def with_hint(pruned: PrunedReport) -> PrunedReport:
    """``pruned`` with its ``hint`` filled in."""
    return replace(pruned, hint=keep_hint(pruned))


def hint_of(pruned: PrunedReport) -> OntologyHint | None:
    """The report's hint, or one made now for a report recorded before hints existed."""
    return pruned.hint if pruned.hint is not None else keep_hint(pruned)


def hint_markdown(pruned: PrunedReport) -> list[str]:
    """The hint as markdown lines (the Prefect artifact); none when nothing can be kept by growing the ontology."""
    hint = hint_of(pruned)
    if hint is None:
        return []
    lines = []
    if hint.command:
        lines += [
            "To keep them in the next ingestion (or re-extraction), grow the ontology:",
            "",
            "```",
            hint.command,
            "```",
            "",
            "or call the `set_ontology` tool (or `POST /v1/ontology`) with:",
            "",
            "```json",
            hint.arguments,
            "```",
        ]
    if hint.reextract:
        lines += [
            "",
            f"Then re-extract the {len(hint.documents)} documents they were dropped from (their chunks and evidence "
            "ids stay as they are; `POST /v1/reextractions` or the `reextract` tool take the same ids):",
            "",
            "```",
            hint.reextract,
            "```",
        ]
    if hint.skipped:
        lines += ["", f"Not in the hint (rename them in your extractor or prompt): {'; '.join(hint.skipped)}."]
    return lines
