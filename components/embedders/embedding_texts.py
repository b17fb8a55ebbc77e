"""The text each kind of stored item is embedded from: one builder per kind, used by every writer of its vectors.

Ingestion, re-extraction, community reports and vector repair all embed through these, so a vector rebuilt later
is the vector first written. The text is also stored with the point (its keyword index is built from it). A fact's
text is its keyword text only (``fact_keyword_text``): its dense vector is made from vectors (``fact_vectors``).

``entity_comparison_text`` is not a stored vector's text: it is what entity resolution compares near misses by.
"""

from __future__ import annotations

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact


def chunk_embedding_text(chunk: Chunk) -> str:
    """What a chunk's vectors are computed from: where it sits, then what it says.

    The document title and heading path come first, joined by ``" > "``; a heading the chunk's first line already
    states is not repeated.

    Usage:
        ```python
        chunk_embedding_text(chunk)  # the title and headings, a newline, then the text: "Team > Leads" ...
        ```
    """
    path = chunk.heading_path if chunk.heading_path[:1] == (chunk.title,) else (chunk.title, *chunk.heading_path)
    first_line = chunk.text.split("\n", 1)[0].lstrip("#").strip()
    if path and path[-1] == first_line:
        path = path[:-1]
    prefix = " > ".join(p for p in path if p)
    return f"{prefix}\n{chunk.text}" if prefix else chunk.text


def entity_embedding_text(entity: Entity) -> str:
    """What an entity's vectors are computed from: ``"name (label): description"``, always in that shape.

    Usage:
        ```python
        entity_embedding_text(Entity("e1", "Ada", "Person", "leads Orion"))  # "Ada (Person): leads Orion"
        ```
    """
    return f"{entity.name} ({entity.label}): {entity.description}"


def entity_comparison_text(entity: Entity) -> str:
    """What entity resolution embeds to compare two near-miss entities; never stored.

    Like ``entity_embedding_text``, but an empty label or description is left out (``"Ada: leads Orion"``,
    ``"Ada (Person)"``) instead of leaving ``"()"`` or a trailing ``": "``. The two differ only for such entities;
    each is kept as it is because changing the stored one would change every stored entity vector, and changing this
    one would change which near misses the ``embedding`` rule merges.

    Usage:
        ```python
        entity_comparison_text(Entity("e1", "Ada", "Person", ""))  # "Ada (Person)"
        ```
    """
    head = f"{entity.name} ({entity.label})" if entity.label else entity.name
    return f"{head}: {entity.description}" if entity.description else head


def predicate_words(relation_type: str) -> str:
    """A relation type as words: ``RELATED_TO`` reads ``related to``; a phrase (``owns``, ``studied at``) is kept.

    Usage:
        ```python
        predicate_words("WORKS_AT")  # "works at"
        ```
    """
    if relation_type.isupper() or "_" in relation_type:
        return relation_type.replace("_", " ").lower().strip()
    return relation_type.strip()


def fact_statement(fact: Fact) -> str:
    """A fact as words: ``"Victor Hale owns Osprey Ceramics"``, ``"Krill-9 related to Dr. Cathcart"``."""
    return f"{fact.source} {predicate_words(fact.type)} {fact.target}"


def fact_keyword_text(fact: Fact) -> str:
    """What a fact's keyword (BM25) leg indexes: ``"subject predicate object: sentence"``.

    The statement first, so a predicate's words and the ends' names find it; then the sentence. A fact's dense vector
    is made from its passage's and its ends' vectors instead (``fact_vectors``): embedding this text measured worse
    and cost more.

    Usage:
        ```python
        fact_keyword_text(fact)  # "Victor Hale owns Osprey Ceramics: Victor Hale has owned it since 2019."
        ```
    """
    statement = fact_statement(fact)
    return f"{statement}: {fact.description}" if fact.description else statement


def community_report_text(community: Community) -> str:
    """What a community's vectors are computed from: its report's title, summary and findings ('' without a report).

    Usage:
        ```python
        community_report_text(community)  # title, summary and findings on three lines
        ```
    """
    report = community.report
    if report is None:
        return ""
    findings = " ".join(f.summary for f in report.findings)
    return f"{report.title}\n{report.summary}\n{findings}".strip()
