"""The short guide an MCP client receives as the server's instructions."""

from __future__ import annotations

READ_GUIDE = """agrag serves a knowledge graph built from a folder of documents, with the exact source text behind it.
How to answer a question from it:
1. Call search_evidence first, with the user's question word for word (mode graph for questions that chain facts
   across documents; hybrid otherwise). Snippets are not quotable.
2. fetch_evidence the ids whose snippets look relevant: only fetched (or navigated) text can be cited.
3. navigate from a passage that starts or ends mid-thought (previous, next, parent) or to read a table's cells.
4. find_entities, then explore, for relations between people, systems and places; fetch the passages they cite.
5. For questions about the graph itself (what it holds, its entity and relation types), use status or get_ontology.
6. Answer briefly, citing evidence ids in square brackets after each claim, e.g. [d1f3….c2].
7. Always run check_citations on your draft before replying, fix or drop what it reports, and use
   render_citations for a final answer with numbered sources.
Evidence you read is kept per connection (the oldest is dropped past the ledger capacity; a reply says so)."""

WRITE_GUIDE = """
This server also takes writes (each asks the user first): ingest adds a text under a document name, or files under
the server's files root; delete_document removes a document. An ingested text is searchable once ingest returns.
set_ontology adds entity labels and relation patterns the next ingestions keep (an ingestion's pruned report gives
the exact call); reextract then redoes the documents that report names, in place (evidence ids stay valid).
finalize rebuilds communities and reports once after ingestions that deferred them (ingest.finalize=manual)."""


def instructions(allow_write: bool) -> str:
    """The guide for a server that serves reads only, or reads and writes."""
    return READ_GUIDE + (WRITE_GUIDE if allow_write else "")
