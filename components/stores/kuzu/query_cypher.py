"""Checks of the Cypher a user or a model wrote, and the statements that describe the schema to them."""

import re

# Queries a model or a user wrote run in a read-only transaction, after a check of their words: no writes, one
# statement, and only the catalog procedures below.
BEGIN_READ_ONLY = "BEGIN TRANSACTION READ ONLY"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"
WRITE_KEYWORDS = frozenset(
    {
        "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "COPY", "INSTALL", "UNINSTALL",
        "LOAD", "ATTACH", "USE", "BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT", "EXPORT", "IMPORT", "FOREACH",
        "TRUNCATE", "RENAME",
    }
)  # fmt: skip
READ_ONLY_PROCEDURES = frozenset({"show_tables", "table_info", "show_connection", "db_version"})

# The catalog, described for a prompt. Table names in `table_info` come from `show_tables`, never from a user.
INTERNAL_TABLES = frozenset({"StoreInfo", "MergeLog", "Candidate"})
RELATION_TYPE_COUNTS = "MATCH ()-[x:RELATED]->() RETURN x.type, count(*) AS n ORDER BY n DESC, x.type LIMIT 30"
ENTITY_LABEL_COUNTS = (
    "MATCH (e:Entity) WHERE e.merged_into = '' RETURN e.label, count(*) AS n ORDER BY n DESC, e.label LIMIT 30"
)
SCHEMA_NOTES = (
    "Notes on this graph (Kùzu Cypher):\n"
    "- Relations between entities are all in the RELATED table; their kind is the property RELATED.type, e.g. "
    "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.type = 'WORKS_AT'.\n"
    "- An entity with a non-empty merged_into was merged into the entity with that id: count or list entities with "
    "WHERE e.merged_into = '' to see each resolved entity once.\n"
    "- Chunks are passages of documents; only chunks with current = true belong to the current version.\n"
    "- Chunk-[MENTIONS]->Entity links a passage to the entities it names; Document-[HAS_CHUNK]->Chunk to its "
    "passages; Entity-[IN_COMMUNITY]->Community to topic clusters.\n"
    "- String matching: use lower(e.name) CONTAINS 'word' for loose matches.\n"
    "- Return plain values (properties, counts), not whole nodes; use LIMIT. SKIP is refused."
)


# Literals, quoted names and comments: their words are data, not clauses.
_NOT_CLAUSES = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"\bCALL\b\s*([A-Za-z_][A-Za-z0-9_]*)?", re.IGNORECASE)


def clause_text(query: str) -> str:
    """``query`` without its string literals, quoted names and comments: the words Kùzu reads as clauses."""
    return _NOT_CLAUSES.sub(" ", query)


def read_only_problem(query: str) -> str | None:
    """Say why ``query`` is not one read-only statement, or return None if it looks like one.

    A check of the words, before the read-only transaction that Kùzu enforces: no write or transaction clause, one
    statement, and ``CALL`` only of the catalog procedures in ``READ_ONLY_PROCEDURES``.
    """
    clauses = clause_text(query).strip().rstrip(";").strip()
    if not clauses:
        return "the query is empty"
    if ";" in clauses:
        return "it holds more than one statement; send exactly one"
    writes = sorted({w.upper() for w in _WORD.findall(clauses)} & WRITE_KEYWORDS)
    if writes:
        return f"it uses {', '.join(writes)}"
    for call in _CALL.finditer(clauses):
        name = (call.group(1) or "").lower()
        if name not in READ_ONLY_PROCEDURES:
            allowed = ", ".join(sorted(READ_ONLY_PROCEDURES))
            return f"it calls {name or 'a subquery'!r}; only these procedures may be called: {allowed}"
    return None


# Work Kùzu cannot bound (measured on 0.11.3): a list is allocated outside the buffer pool, and an expression of
# constants is evaluated while the query is planned, before its timeout runs; `UNWIND range(1,100000000)` grew the
# process past 22 GB. So `range` takes integer literals spanning at most MAX_RANGE_VALUES values, and a query may
# concatenate at most MAX_CONCATENATIONS times (`l + l` repeated doubles a list each time).
MAX_RANGE_VALUES = 100_000
MAX_CONCATENATIONS = 8
_RANGE = re.compile(r"\brange\s*\(", re.IGNORECASE)
_INTEGER = re.compile(r"\s*[-+]?\d+\s*")
_CONCATENATION = re.compile(r"\+|\b(?:list_concat|list_cat|array_concat|array_cat)\s*\(", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`]*)`|'((?:\\.|[^'\\])*)'")
# A label or relationship type: after `:` or `|` in a pattern (a map key's value may match too; that only refuses more).
_LABEL = re.compile(r"[:|]\s*([A-Za-z_]\w*)")
_LABELLED = re.compile(r"([A-Za-z_]\w*)\s*:\s*[A-Za-z_`]")
_LAST_WORD = re.compile(r"([A-Za-z_]\w*)$")
_BEFORE_PATTERN = frozenset({"MATCH", "WHERE", "AND", "OR", "XOR", "NOT", "RETURN", "WITH", "DISTINCT", "IN", "WHEN"})
_NODE = re.compile(r"\(\s*([A-Za-z_]\w*)?\s*(?:\{[^{}]*\})?\s*\)")


def _arguments(text: str, start: int) -> str:
    """The text from ``start`` (just after an opening parenthesis) to its closing one, nested parentheses kept."""
    depth = 1
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end]
    return text[start:]


def _range_problem(arguments: str) -> str | None:
    values = arguments.split(",")
    if not 2 <= len(values) <= 3 or not all(_INTEGER.fullmatch(v) for v in values):
        return f"range({arguments.strip()}) does not have integer literal bounds"
    start, end, step = int(values[0]), int(values[1]), int(values[2]) if len(values) == 3 else 1
    if step == 0 or (end - start) // step + 1 > MAX_RANGE_VALUES:
        return f"range({arguments.strip()}) spans more than {MAX_RANGE_VALUES:,} values"
    return None


# Kùzu 0.11.3 can crash the process on ORDER BY ... SKIP n LIMIT m when n passes the last row by a sort block
# (see connection.SKIP); a query a user or a model wrote cannot be counted first, so it may not skip at all.
_SKIP = re.compile(r"\bSKIP\b", re.IGNORECASE)


def unbounded_problem(query: str) -> str | None:
    """Say why ``query`` could do work Kùzu cannot interrupt or bound in memory, or crash it, or return None.

    ``range`` must have integer literal bounds spanning at most ``MAX_RANGE_VALUES`` values, the query may hold
    at most ``MAX_CONCATENATIONS`` ``+`` operators and list concatenations, and it may not page with ``SKIP``.
    """
    clauses = clause_text(query)
    if _SKIP.search(clauses):
        return (
            "it pages with SKIP, which can crash the graph engine when it skips past the last row; leave SKIP out and "
            "narrow the rows with WHERE (e.g. on the sort key, after the last value seen) and LIMIT"
        )
    for call in _RANGE.finditer(clauses):
        if problem := _range_problem(_arguments(clauses, call.end())):
            return f"{problem}; write range(a, b) with whole numbers at most {MAX_RANGE_VALUES:,} apart"
    if (uses := len(_CONCATENATION.findall(clauses))) > MAX_CONCATENATIONS:
        return f"it concatenates or adds {uses} times; at most {MAX_CONCATENATIONS} are allowed"
    return None


def internal_table_problem(query: str) -> str | None:
    """Say how ``query`` would read a table outside the public schema (``INTERNAL_TABLES``), or return None.

    Kùzu's table names are case-insensitive, so a name is refused in any case, quoted with backticks or given to a
    catalog procedure; and a node pattern needs a label (or a relationship) unless its variable has one elsewhere,
    since ``MATCH (n)`` matches every node table.
    """
    clauses = clause_text(query)
    internal = {name.lower(): name for name in INTERNAL_TABLES}
    names = {m.lower() for m in _LABEL.findall(clauses)}
    call = _CALL.search(clauses) is not None  # a catalog procedure takes the table's name as a string
    names |= {
        (q.group(1) if q.group(1) is not None else q.group(2) if call else "").strip().lower()
        for q in _QUOTED.finditer(query)
    }
    if named := sorted(internal[w] for w in names & internal.keys()):
        return f"it names the internal table {', '.join(named)}; only the tables of the schema may be read"
    labelled = {m.lower() for m in _LABELLED.findall(clauses)}
    for node in _NODE.finditer(clauses):
        before, after = clauses[: node.start()].rstrip(), clauses[node.end() :].lstrip()
        attached = (before[-1:] in ("-", ">")) or after[:1] in ("-", "<")
        word = _LAST_WORD.search(before)
        called = word is not None and word.group(1).upper() not in _BEFORE_PATTERN  # a function call
        if not (attached or called or (node.group(1) or "").lower() in labelled):
            return f"the node pattern {node.group(0)} has no label; give it one, e.g. (n:Entity)"
    return None
