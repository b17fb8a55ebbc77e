"""The spec's public import paths and its code examples, run verbatim (``facade/`` provides the paths).

The examples are taken from the spec files as they stand: a code example is a paragraph that starts with an
``agrag`` import, continued by every following paragraph that is Python; the paragraph after it is the output it
prints. Nothing of an example is adapted: it runs with the names its page says it reuses (``store``, ``embedder``
from "Set up the example": the example notes ingested into a data dir).
"""

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.runtime import open_runtime
from tests.conftest import REPO
from tests.service.conftest import copy_corpus, settings_of

SPEC = REPO.parent / "shared" / "spec"
SPEC_FILES = ("retrieval-overview.txt", "recipe-search.txt", "retrieval-concepts.txt")
FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason=f"the spec is not checked out next to the repo ({SPEC})")


@dataclass(frozen=True)
class Example:
    """One code example of a spec file and the output printed under it."""

    source: str
    code: str
    output: str


def _is_python(paragraph: str) -> bool:
    try:
        compile(paragraph, "<spec>", "exec", flags=FLAGS)
    except SyntaxError:
        return False
    return True


def _paragraphs(name: str) -> list[str]:
    return [p.strip("\n") for p in re.split(r"\n\s*\n", (SPEC / name).read_text(encoding="utf-8"))]


def spec_examples() -> list[Example]:
    """Every code example of the spec files, with the output paragraph that follows it."""
    examples: list[Example] = []
    for name in SPEC_FILES if SPEC.is_dir() else ():
        paragraphs = _paragraphs(name)
        at = 0
        while at < len(paragraphs):
            if not re.match(r"(from|import) agrag\b", paragraphs[at]) or not _is_python(paragraphs[at]):
                at += 1
                continue
            end = at + 1
            while end < len(paragraphs) and _is_python(paragraphs[end]):
                end += 1
            output = paragraphs[end] if end < len(paragraphs) else ""
            examples.append(Example(name, "\n\n".join(paragraphs[at:end]) + "\n", output))
            at = end
    return examples


def spec_import_paths() -> list[str]:
    """Every ``agrag.<module path>`` the spec's prose and code name."""
    found: set[str] = set()
    for name in SPEC_FILES:
        text = (SPEC / name).read_text(encoding="utf-8")
        found.update(m.rstrip(".") for m in re.findall(r"\bagrag(?:\.[a-z_]+)+", text))
    return sorted(found)


def spec_recipes() -> dict[str, tuple[tuple[str, ...], int]]:
    """The preset table rows of the spec: recipe name -> (methods, result limit)."""
    rows: dict[str, tuple[tuple[str, ...], int]] = {}
    for name in SPEC_FILES:
        for line in (SPEC / name).read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in re.split(r"\t|\|", line) if c.strip()]
            if len(cells) >= 4 and re.fullmatch(r"[A-Z][A-Z0-9_]+", cells[0]) and cells[3].isdigit():
                rows[cells[0]] = (tuple(m.strip() for m in cells[1].split(",")), int(cells[3]))
    return rows


def test_the_spec_is_read_whole() -> None:
    """The extraction finds what the spec holds, so a change in its layout cannot make the other tests vacuous."""
    assert [e.source for e in spec_examples()] == ["recipe-search.txt"]
    assert {"agrag.evidence", "agrag.retrieval.recipes", "agrag.retrieval.search_engine"} <= set(spec_import_paths())
    assert {"HYBRID", "THEMATIC", "TEXT2CYPHER"} <= set(spec_recipes())


@pytest.mark.parametrize("path", spec_import_paths() if SPEC.is_dir() else [])
def test_every_import_path_the_spec_names_imports(path: str) -> None:
    module = importlib.import_module(path)
    assert module.__name__ == path


def test_the_presets_import_from_the_spec_path_with_the_spec_values() -> None:
    from agrag.pipelines import recipes as home
    from agrag.retrieval import recipes

    for name, (methods, limit) in spec_recipes().items():
        recipe = getattr(recipes, name)
        assert recipe is getattr(home, name), name
        assert (tuple(m.value for m in recipe.methods), recipe.limit) == (methods, limit), name


def test_the_names_the_spec_uses_are_the_real_objects() -> None:
    from agrag.common.data_models.chunk import Chunk
    from agrag.common.data_models.community import Community
    from agrag.common.data_models.entity import Entity, ResolvedEntity
    from agrag.common.data_models.relation import Relation
    from agrag.components.data_models import chunk, community, entity, relation, resolved_entity
    from agrag.components.errors import AllRetrievalMethodsFailedError, UnknownRecipeMethodError
    from agrag.evidence import EvidenceSession
    from agrag.pipelines import search_engine
    from agrag.retrieval import search_engine as public

    assert (Chunk, Entity, Relation, Community) == (chunk.Chunk, entity.Entity, relation.Relation, community.Community)
    # "An item in a result is an Entity, a ResolvedEntity, ...": a resolved entity is an entity, and keys as one.
    assert ResolvedEntity is resolved_entity.ResolvedEntity and issubclass(ResolvedEntity, Entity)
    assert public.SearchEngine is search_engine.SearchEngine
    assert public.UnknownRecipeMethodError is UnknownRecipeMethodError
    assert public.AllRetrievalMethodsFailedError is AllRetrievalMethodsFailedError
    # The spec's signature of the search and of the other engine calls it lists.
    assert list(inspect.signature(public.SearchEngine.search).parameters) == ["self", "query", "recipe", "filters"]
    for call in ("find_entity", "traverse", "list_relationship_types", "search_candidates"):
        assert callable(getattr(public.SearchEngine, call)), call
    # The evidence functions of the overview are the methods of a session, which holds the document scope.
    for function in ("discover", "fetch", "navigate", "find_entities", "explore", "check_citations"):
        assert callable(getattr(EvidenceSession, function)), function
    assert callable(EvidenceSession.render_citations)
    # ... and module functions a script calls directly ("The evidence functions in agrag.evidence ...").
    import agrag.evidence

    for function in ("discover", "fetch", "navigate", "find_entities", "explore", "check_citations"):
        assert getattr(agrag.evidence, function).__doc__, function
    assert callable(agrag.evidence.render_citations) and callable(agrag.evidence.close)


@pytest.fixture
def example_setup(
    ingested_corpus: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> Iterator[tuple[KnowledgeStore, SentenceTransformersTextEmbedder]]:
    """``store`` and ``embedder`` of "Set up the example": the example notes ingested into a data dir."""
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        yield runtime.store, embedder


@pytest.mark.parametrize("example", spec_examples(), ids=lambda e: e.source)
async def test_a_spec_example_runs_verbatim_and_prints_what_the_spec_shows(
    example: Example,
    example_setup: tuple[KnowledgeStore, SentenceTransformersTextEmbedder],
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, embedder = example_setup
    namespace = {"store": store, "embedder": embedder}
    ran = eval(compile(example.code, example.source, "exec", flags=FLAGS), namespace)
    if inspect.iscoroutine(ran):
        await ran
    printed = [_columns(line) for line in capsys.readouterr().out.splitlines()]
    shown = [_columns(line) for line in example.output.splitlines()]
    # The spec's run used an LLM extractor (its "Orion" is an invented entity) and ties of equal RRF scores may
    # fall either way, so the rows are compared by what the page says of them: the same scores in the same order,
    # the same methods at each score, the method column naming the item's type, and the planner entity among them.
    assert [row.score for row in printed] == [row.score for row in shown]
    assert sorted((r.score, r.method, r.kind) for r in printed) == sorted((r.score, r.method, r.kind) for r in shown)
    assert all(row.kind == row.method.capitalize() for row in printed)
    assert shown[0].label in {row.label for row in printed if row.kind == "Entity"}


@dataclass(frozen=True)
class Row:
    """One printed line of the example: method, score, item type, label."""

    method: str
    score: str
    kind: str
    label: str


def _columns(line: str) -> Row:
    match = re.fullmatch(r"(\S+)\s+(\S+)\s+(\S+)\s+(.*)", line.rstrip())
    assert match, f"not a row of the example's output: {line!r}"
    method, score, kind, label = match.groups()
    return Row(method, score, kind, label.strip())
