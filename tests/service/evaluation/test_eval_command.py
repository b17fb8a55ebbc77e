import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.service.cli import app
from agrag.service.evaluation.converters import load_named
from agrag.service.evaluation.dataset import EvalDataset, write_generic

PASSAGES = [
    ("Maria Chen", "Maria Chen is a roboticist who wrote the Orion Planner in 2019."),
    ("Orion Planner", "The Orion Planner is route planning software used at the Lyon Depot."),
    ("Lyon Depot", "The Lyon Depot is a warehouse run by Acme Robotics on the banks of the Rhone."),
    ("Acme Robotics", "Acme Robotics is a company based in Grenoble that builds warehouse robots."),
    ("Atlas Controller", "The Atlas Controller is motor firmware written by Tomas Berg."),
    ("Tomas Berg", "Tomas Berg is an engineer who studied at ETH Zurich."),
    ("Grenoble", "Grenoble is a city in the French Alps, known for research institutes."),
    ("Vega Camera", "The Vega Camera is a depth sensor mounted on every robot of the fleet."),
]
QUESTIONS = [
    {
        "question": "Which company runs the depot that uses the planner Maria Chen wrote?",
        "gold": [0, 1, 2],
        "type": "3hop",
        "answer_passage": 2,
    },
    {
        "question": "Where did the author of the Atlas Controller study?",
        "gold": [4, 5],
        "type": "2hop",
        "answer_passage": 5,
    },
    {"question": "In which city is Acme Robotics based?", "gold": [3], "type": "1hop"},
]
TRIPLES = {
    "Maria Chen": [["Maria Chen", "wrote", "Orion Planner"]],
    "Orion Planner": [["Orion Planner", "used at", "Lyon Depot"]],
    "Lyon Depot": [["Lyon Depot", "run by", "Acme Robotics"]],
    "Acme Robotics": [["Acme Robotics", "based in", "Grenoble"]],
    "Atlas Controller": [["Atlas Controller", "written by", "Tomas Berg"]],
    "Tomas Berg": [["Tomas Berg", "studied at", "ETH Zurich"]],
    "Grenoble": [["Grenoble", "located in", "French Alps"]],
    "Vega Camera": [["Vega Camera", "is a", "depth sensor"]],
}
RECIPES = ["hybrid", "chunk", "multi_hop", "bridge"]
# evaluation.recipes=[all]: every recipe of conf/recipe. Without a loadable cross-encoder and without an LLM, two
# of them are rows that say why they were skipped.
EVERY_RECIPE = [
    "entity",
    "chunk",
    "hybrid",
    "hybrid_reranked",
    "graph_expand",
    "thematic",
    "text2cypher",
    "multi_hop",
    "bridge",
    "fact",
]
SKIPPED = ["hybrid_reranked", "text2cypher"]
RAN = [r for r in EVERY_RECIPE if r not in SKIPPED]
MODES = ["keyword", "vector", "hybrid", "graph"]  # the search_evidence tool's, scored after the recipes
SYSTEMS = [
    "bm25",
    "dense",
    "rrf",
    *RAN,
    *(f"search_evidence ({m})" for m in MODES),
    *(f"{r} (LLM triples)" for r in RAN),
    *(f"search_evidence ({m}, LLM triples)" for m in MODES),
]


@pytest.fixture
def dataset_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in PASSAGES]))
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    docs = [
        {
            "passage": f"{t}\n{x}",
            "extracted_entities": sorted({e for s, _, o in TRIPLES[t] for e in (s, o)}),
            "extracted_triples": TRIPLES[t],
        }
        for t, x in PASSAGES
    ]
    triples = tmp_path / "openie.json"
    triples.write_text(json.dumps({"docs": docs}))
    return corpus, questions, triples


def run_eval(files: tuple[Path, Path, Path], *extra: str, env: dict[str, str] | None = None) -> str:
    corpus, questions, triples = files
    args = ["eval", "--corpus", str(corpus), "--questions", str(questions), "--triples", str(triples), *extra]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "240", **(env or {})})
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_eval_end_to_end_on_a_tiny_generic_dataset(tmp_path: Path, dataset_files: tuple[Path, Path, Path]) -> None:
    args = ("evaluation.llm_triples=true", "evaluation.bootstrap_samples=200", "evaluation.recipes=[all]")
    env = {"RETRIEVAL_CROSS_ENCODER_MODEL": str(tmp_path / "no-cross-encoder")}
    output = run_eval(dataset_files, *args, env=env)

    for system in SYSTEMS:
        assert f"| {system} |" in output
    assert "Skipping text2cypher: needs an LLM" in output
    for variant in ("", " (LLM triples)"):
        assert f"| text2cypher{variant} | — |" in output and "AGRAG_LLM_BASE_URL is not set |" in output
        assert f"| hybrid_reranked{variant} | — |" in output and "no-cross-encoder" in output
    assert "Store default: ingested 8 chunks" in output
    assert "Store triples: ingested 8 chunks" in output
    results = tmp_path / "bench" / "results"
    summary = json.loads(next(results.glob("corpus-*.json")).read_text())
    assert list(summary["recall_at_5"]) == SYSTEMS
    assert all(0 <= value <= 100 for value in summary["recall_at_5"].values())
    assert set(summary["skipped"]) == {*SKIPPED, *(f"{r} (LLM triples)" for r in SKIPPED)}
    assert summary["systems"]["thematic"]["strict"]["recall@5"] == 0.0, "no passage among its items"
    assert summary["systems"]["graph_expand"]["strict"]["recall@5"] > 0.0, "the walk's passages count"
    assert summary["systems"]["graph_expand"]["expanded"]["recall@5"] > 0
    assert summary["systems"]["thematic (LLM triples)"]["expanded"]["recall@5"] > 0
    assert summary["systems"]["hybrid"]["versus_best_baseline"]["p_not_better"] >= 0
    assert summary["systems"]["bm25"]["versus_best_baseline"] is None
    assert set(summary["systems"]["hybrid"]["by_type"]) == {"1hop", "2hop", "3hop"}
    assert "answer@5" in summary["systems"]["dense"]["strict"]
    lines = [json.loads(line) for line in next(results.glob("*.questions.jsonl")).read_text().splitlines()]
    assert len(lines) == len(SYSTEMS) * len(QUESTIONS)
    assert {tuple(line["gold"]) for line in lines} == {(0, 1, 2), (4, 5), (3,)}
    assert all(len(line["ranked"]) <= 10 for line in lines)
    assert next(results.glob("*.png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the agent's graph search walks as the bridge recipe does: the same passages, in the same order
    for variant in ("", ", LLM triples"):
        recipe = "bridge" + (" (LLM triples)" if variant else "")
        ranked = {line["system"]: [] for line in lines}
        for line in lines:
            ranked[line["system"]].append(line["ranked"])
        assert ranked[f"search_evidence (graph{variant})"] == ranked[recipe]
    assert summary["systems"]["search_evidence (hybrid)"]["kind"] == "search_evidence"
    assert summary["systems"]["search_evidence (keyword)"]["versus_best_baseline"]["p_not_better"] >= 0

    again = run_eval(dataset_files, *args, env=env)
    assert "Store default: reused" in again
    assert "Store triples: reused" in again

    def table(text: str) -> str:
        return text.split("Strict scoring")[1].split("\n", 1)[1].split("Wrote", maxsplit=1)[0]

    assert table(again) == table(output)


def test_eval_errors_name_the_problem(dataset_files: tuple[Path, Path, Path]) -> None:
    corpus, questions, _ = dataset_files
    runner = CliRunner()
    missing = runner.invoke(app, ["eval", "--corpus", str(corpus)])
    assert missing.exit_code == 1
    assert "Give both --corpus and --questions" in missing.output
    typo = runner.invoke(app, ["eval", "--corpus", str(corpus), "--questions", str(questions), "evaluation.recipe=[x]"])
    assert typo.exit_code == 2
    assert "evaluation.recipe" in typo.output
    unknown = runner.invoke(
        app, ["eval", "--corpus", str(corpus), "--questions", str(questions), "evaluation.recipes=[nope]"]
    )
    assert unknown.exit_code == 2
    assert "nope" in unknown.output


REAL_BENCH = Path(__file__).resolve().parents[3].parent / "shared" / "bench"


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.skipif(not REAL_BENCH.is_dir(), reason="the shared benchmark folder is not on this machine")
def test_eval_on_a_slice_of_musique(tmp_path: Path) -> None:
    """Three real questions over their gold passages and 40 others, through the converter and the whole harness."""
    full = load_named("musique_dev", REAL_BENCH)
    questions = full.questions[:3]
    keep = sorted({g for q in questions for g in q.gold} | set(range(40)))
    new_index = {old: new for new, old in enumerate(keep)}
    sliced = EvalDataset(
        "musique_slice",
        tuple(full.corpus[i] for i in keep),
        tuple(
            replace(
                q, gold=tuple(new_index[g] for g in q.gold), answer_passage=new_index[q.answer_passage or q.gold[-1]]
            )
            for q in questions
        ),
    )
    corpus, question_file = write_generic(sliced, tmp_path / "slice")
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--corpus",
            str(corpus),
            "--questions",
            str(question_file),
            "evaluation.bootstrap_samples=100",
            f"evaluation.recipes=[{','.join(RECIPES)}]",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(next((tmp_path / "bench" / "results").glob("corpus-*.json")).read_text())
    assert summary["passages"] == len(keep)
    assert set(summary["recall_at_5"]) == {"bm25", "dense", "rrf", *RECIPES, *(f"search_evidence ({m})" for m in MODES)}
    assert summary["recall_at_5"]["search_evidence (graph)"] == summary["recall_at_5"]["bridge"]
    assert set(summary["systems"]["multi_hop"]["by_type"]) <= {"2hop", "3hop", "4hop"}
    assert summary["systems"]["multi_hop"]["strict"]["answer@5"] >= 0


def test_error_messages_keep_their_brackets(tmp_path: Path, dataset_files: tuple[Path, Path, Path]) -> None:
    corpus, _, _ = dataset_files
    questions = tmp_path / "bad.json"
    questions.write_text(json.dumps([{"question": "x", "gold": []}]))
    result = CliRunner().invoke(app, ["eval", "--corpus", str(corpus), "--questions", str(questions)])
    assert result.exit_code == 1
    assert '"gold" must be a non-empty list of corpus indexes, got [].' in result.output
