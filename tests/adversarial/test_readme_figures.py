"""The figures of the README's "Security and failure model" come from this suite: recount them and compare."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.adversarial import test_hostile_cypher_and_corrupted_stores as hostile
from tests.adversarial import test_output_and_processes as processes
from tests.adversarial import test_r3_fuzz as fuzz
from tests.adversarial import test_scope_and_filters as scope_and_filters
from tests.adversarial import test_scope_properties as scope_properties

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Security and failure model"


def _parametrized(test: object) -> int:
    """How many cases ``@pytest.mark.parametrize`` gives a test function (one mark)."""
    (mark,) = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
    return len(mark.args[1])


def _defect_tests(prefix: str = "test_defect") -> list[str]:
    """Every test function named after a defect (of the first probe, or of round 3), anywhere under tests/."""
    names = []
    for path in (ROOT / "tests").rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        names += [n.name for n in functions if n.name.startswith(prefix)]
    return names


def _readme_figures() -> dict[str, int]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert SECTION in readme, f"the README has no {SECTION!r} section"
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    table = section.split("| probe | count |", 1)[1]
    return {m[1].strip(): int(m[2]) for m in re.finditer(r"^\| (.+?) \| (\d+) \|$", table, re.MULTILINE)}


def _counted() -> dict[str, int]:
    settings = scope_properties.test_no_scoped_read_returns_anything_out_of_scope._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    corrupted = 2 + _parametrized(hostile.test_defect_6_lost_chunk_vectors_are_refused_then_repaired)
    return {
        "method or step": len(scope_and_filters.PARTS) * len(scope_and_filters.FILTERS),
        "generated corpora": settings.max_examples,
        "hostile read-only Cypher": len(hostile.HOSTILE)
        + _parametrized(hostile.test_defect_4_text2cypher_gets_the_typed_refusal_and_the_graph_stays),
        "damaged data dirs": corrupted,
        "kill -9": _parametrized(processes.test_defect_7_kill_9_of_agrag_leaves_no_prefect_server_running),
        "regression tests named after the 13 defects": len(_defect_tests()),
        "regression tests named after the defects of round 3": len(_defect_tests("test_r3_defect")),
        "fuzzed calls": sum(fuzz.EXAMPLES_OF.values()) + len(fuzz.PROBES),
    }


def test_the_readme_states_the_figures_this_suite_runs() -> None:
    stated = _readme_figures()
    for start, count in _counted().items():
        rows = [label for label in stated if label.startswith(start) or start in label]
        assert len(rows) == 1, f"no single README row for {start!r} in {sorted(stated)}"
        assert stated[rows[0]] == count, f"README says {stated[rows[0]]} for {rows[0]!r}; the suite runs {count}"


def test_every_numbered_defect_has_a_regression_test() -> None:
    numbers = {int(re.match(r"test_defects?_(\d+)", name)[1]) for name in _defect_tests()}  # type: ignore[index]
    assert numbers == set(range(1, 14)), f"defects without a test: {sorted(set(range(1, 14)) - numbers)}"


def test_every_defect_of_round_3_has_a_regression_test() -> None:
    numbers = {int(re.match(r"test_r3_defect_(\d+)", name)[1]) for name in _defect_tests("test_r3_defect")}  # type: ignore[index]
    assert numbers == set(range(1, 10)), f"defects of issue 43 without a test: {sorted(set(range(1, 10)) - numbers)}"


@pytest.mark.parametrize("module", [hostile, processes, scope_and_filters, scope_properties, fuzz])
def test_the_suite_modules_say_what_they_hold(module: object) -> None:
    assert (getattr(module, "__doc__", "") or "").strip(), f"{module} has no docstring"
