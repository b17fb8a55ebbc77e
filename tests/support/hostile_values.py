"""Hostile values for fuzzing agrag's inputs: interpolations, overrides, controls, huge numbers, broken bodies.

What a hostile probe of the HTTP API and MCP tried (issue 43): OmegaConf interpolations and resolvers in request
overrides (``${oc.env:...}``, ``${oc.decode:...}``), offsets past the end and past 64 bits, NUL and other controls,
bidi overrides, lone surrogates, paths out of the files root, and bodies that are not JSON. ``ENV_NAMES`` are the
variables a probe asks the server for; the fuzz suite sets each of them in the server's environment, so a reply that
holds one of their values shows that an interpolation was evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class ItemAt(Generic[T]):
    """The value at an index of a list, with a short repr."""

    def __init__(self, values: Sequence[T]) -> None:
        self.values = tuple(values)

    def __call__(self, index: int) -> T:
        return self.values[index]

    def __repr__(self) -> str:
        return f"<one of {len(self.values)} values>"


def pick(values: Sequence[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from(values)`` with a short repr.

    Hypothesis builds the repr of nested strategies, and ``sampled_from`` shows every value: with the long hostile
    strings repeated through the fields of a large schema, the reprs grew the test process to 20 GB.
    """
    items = ItemAt(values)
    return st.integers(0, len(items.values) - 1).map(items)


# The server's variables a request asks for; the canary is set by the suite (tests/support/fuzz_server.py).
CANARY_NAME = "FUZZ_CANARY_SECRET"
ENV_NAMES = (CANARY_NAME, "AGRAG_API_TOKENS", "AGRAG_LLM_API_KEY", "HOME", "PATH")


def _interpolations() -> tuple[str, ...]:
    found = []
    for name in ENV_NAMES:
        found += [
            f"${{oc.env:{name}}}",
            f"${{oc.env:{name},fallback}}",
            f"${{oc.decode:${{oc.env:{name}}}}}",
            f"x${{oc.env:{name}}}x",
            f"'${{oc.env:{name}}}'",
        ]
    return (
        *found,
        "${oc.create:{a:${oc.env:HOME}}}",
        "${oc.select:recipe.limit,${oc.env:PATH}}",
        "${oc.dict.values:recipe}",
        "${hydra:runtime.cwd}",
        "${hydra:job.name}",
        "${now:%Y-%m-%d}",
        "${recipe.limit}",
        "${..recipe}",
        "${",
        "${}",
        "${oc.env:}",
        "\\${oc.env:HOME}",
        "$${oc.env:HOME}",
        "${oc.env:" + "A" * 300 + "}",
        "${" * 50 + "}" * 50,
    )


INTERPOLATIONS = _interpolations()
ENV_INTERPOLATIONS = tuple(text for text in INTERPOLATIONS if "oc.env:" in text and any(n in text for n in ENV_NAMES))

CONTROL = (
    "\x00",
    "a\x00b",
    "\x00" * 64,
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "line\nbreak",
    "cr\rreturn",
    "\t\v\f",
    "\x7f\x9b1m",
    "\u202eevil\u202c",
    "\u2066isolate\u2069",
    "\u200b\u200d\ufeff",
    "\ud800",
    "\udcff\udcfe",
    "\uffff\ufffe",
    "🚀💥" * 10,
    "Ω≈ç√∫˜µ≤≥÷",
    "مرحبا بالعالم",
    "Z̸̡̢̛a̶̧̛l̴̢g̷o̵",
    "ﬁ ﬂ ǅ ẞ",
)

PATHS = (
    "..",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/proc/self/environ",
    "~",
    "~/.ssh/id_rsa",
    "acme_notes/../../..",
    "acme_notes/%2e%2e/%2e%2e",
    "acme_notes/\x00.md",
    "**/*",
    "**",
    "*",
    "[!a]*",
    "{a,b}",
    ".",
    "./acme_notes",
    "/",
    "//",
    "C:\\Windows\\win.ini",
    "acme_notes/" + "deep/" * 200,
)

INJECTIONS = (
    "') RETURN 1 //",
    "MATCH (n) DETACH DELETE n",
    "CALL show_tables() RETURN *",
    "'; DROP TABLE Chunk; --",
    "%s%s%s%n",
    "{0}{__class__}",
    "{{7*7}}",
    "<script>alert(1)</script>",
    "\\u0000",
    "null",
    "true",
    "NaN",
    "-1",
    "1e309",
    "99999999999999999999",
    "0x7fffffffffffffff",
)

LONG = ("A" * 5000, "é" * 20000, "[x] " * 3000)

HOSTILE_STRINGS: tuple[str, ...] = (*INTERPOLATIONS, *CONTROL, *PATHS, *INJECTIONS, *LONG, "", " ")

# Settings a request might override, each with values that are fair and values that are not.
OVERRIDE_KEYS = (
    "recipe.limit",
    "recipe.description",
    "recipe.name",
    "recipe",
    "recipe.methods",
    "recipe.min_score",
    "embedder.model",
    "embedder.batch_size",
    "vector_store",
    "vector_store.backend",
    "ingest/extractor",
    "ingest.extractor.path",
    "ingest.max_llm_calls",
    "ingest.write_batch_chunks",
    "ingest.loader.max_file_bytes",
    "ingest.ontology.entity_labels",
    "+recipe.extra",
    "++recipe.limit",
    "~recipe.limit",
    "hydra.run.dir",
    "hydra.job.chdir",
    "evaluation.seed",
)
OVERRIDE_VALUES = (
    "5",
    "0",
    "-1",
    str(10**20),
    "true",
    "null",
    "chunk",
    "multi_hop",
    "triples",
    "[entity,chunk]",
    "{a: 1}",
    "/etc/passwd",
    "../../outside.json",
    "\x00",
    "'quoted ${x}'",
    *INTERPOLATIONS[:12],
)


# The settings a probe aims an interpolation at: a number (the error quotes the value), free text (echoed back), a path.
TARGET_KEYS = ("recipe.limit", "recipe.description", "ingest.extractor.path")


@st.composite
def overrides(draw: st.DrawFn) -> str:
    """One override string: mostly an interpolation of a server variable aimed at a setting, else ``key=value`` from
    the lists above, a bare interpolation or a malformed override."""
    shape = draw(st.integers(0, 9))
    if shape < 6:
        return f"{draw(pick(TARGET_KEYS))}={draw(pick(ENV_INTERPOLATIONS))}"
    if shape == 6:
        return draw(pick(INTERPOLATIONS))
    if shape == 7:
        return draw(pick(("=", "recipe.limit", "=5", "recipe.limit==5", "recipe..limit=5", "a b=c")))
    key = draw(pick(OVERRIDE_KEYS))
    value = draw(pick((*OVERRIDE_VALUES, *HOSTILE_STRINGS[:40])))
    return f"{key}={value}"


BOUNDARY_INTS = (
    -(10**20),
    -(2**63) - 1,
    -(2**63),
    -(2**31),
    -1,
    0,
    1,
    2,
    99,
    100,
    101,
    999,
    1000,
    1001,
    9000,
    9999,
    10000,
    100000,
    10**9,
    2**31 - 1,
    2**31,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    10**20,
    10**400,
)

BOUNDARY_FLOATS = (0.0, -0.0, -1.5, 1e-308, 1e308, float("inf"), float("-inf"), float("nan"), 0.5, 1.0, 100.5)

# Bodies that are not a JSON object of the route's model (sent with content-type application/json).
RAW_BODIES = (
    b"",
    b"{",
    b"null",
    b"[]",
    b'"x"',
    b"12",
    b"\xff\xfe\x00",
    b'{"a": 1, "a": 2}',
    b'{"query": "\xc3\x28"}',
    b"[" * 100_000,
    b'{"x":' * 20_000 + b"1" + b"}" * 20_000,
    b'{"query": NaN, "limit": Infinity}',
    b"\x00" * 1000,
)
