import json
from datetime import UTC, datetime
from pathlib import Path

from agrag.pipelines.config_loader import load_config
from agrag.service.evaluation.dataset import EvalDataset, EvalPassage, EvalQuestion
from agrag.service.evaluation.report import markdown, question_lines, score, summary_json, write
from agrag.service.evaluation.runner import BASELINE, RECIPE, EvalRun, SystemRun

CORPUS = tuple(EvalPassage(f"P{i}", f"passage {i}") for i in range(6))
QUESTIONS = (EvalQuestion("first?", (0, 1), "2hop", answer_passage=1), EvalQuestion("second?", (2,), "1hop"))
SKIP = "needs an LLM to write Cypher: AGRAG_LLM_BASE_URL is not set"


def run() -> EvalRun:
    dataset = EvalDataset("tiny", CORPUS, QUESTIONS)
    ranked = [[0, 1, 3], [4, 2]]
    systems = [
        SystemRun("bm25", BASELINE, ranked, ranked),
        SystemRun("dense", BASELINE, [[3], [2]], [[3], [2]]),
        SystemRun("rrf", BASELINE, [[3, 0], [2]], [[3, 0], [2]]),
        SystemRun("graph_expand", RECIPE, [[], []], [[1, 0], [5]], failed=1, failure="bfs: the walk broke"),
        SystemRun("text2cypher", RECIPE, [], [], skipped=SKIP),
    ]
    return EvalRun(dataset, load_config(["evaluation.bootstrap_samples=100"]), systems)


def test_a_skipped_recipe_is_a_row_that_says_why_and_nothing_else() -> None:
    report = score(run(), "agrag eval tiny")
    table = markdown(report)
    assert f"| text2cypher | — | — | — | — | — | — | — | skipped: {SKIP} |" in table
    assert "Δ R@5 vs rrf [95% CI], p |" in table, "a fused recipe is also compared with the fused baseline"
    assert "| graph_expand | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 50.0 | -100.0 [" in table
    assert "graph_expand: a method failed in 1 of 2 searches" in table and "first: bfs: the walk broke" in table
    by_type = table.split("by question type")[1]
    assert "| graph_expand |" in by_type and "text2cypher" not in by_type

    summary = summary_json(report)
    assert list(summary["recall_at_5"]) == ["bm25", "dense", "rrf", "graph_expand"]
    assert summary["skipped"] == {"text2cypher": SKIP}
    assert summary["systems"]["text2cypher"] == {"kind": RECIPE, "skipped": SKIP}
    assert summary["systems"]["graph_expand"]["failed_searches"] == 1
    assert summary["systems"]["graph_expand"]["expanded"]["recall@5"] == 50.0
    assert summary["best_baseline"] == "bm25"
    assert summary["systems"]["graph_expand"]["versus_rrf"]["difference"] == -75.0
    assert {json.loads(line)["system"] for line in question_lines(report)} == {"bm25", "dense", "rrf", "graph_expand"}


def test_the_files_are_written_with_a_skipped_recipe(tmp_path: Path) -> None:
    report = score(run(), "agrag eval tiny")
    report = type(report)(report.run, report.scores, report.best_baseline, datetime(2026, 11, 29, tzinfo=UTC), "x")
    files = write(report, tmp_path)
    assert files.chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(files.json.read_text())["skipped"] == {"text2cypher": SKIP}
    assert "skipped:" in files.markdown.read_text()


def test_when_rrf_is_the_best_baseline_it_gets_one_column() -> None:
    tiny = run()
    perfect = [[0, 1], [2]]
    best = {"rrf": perfect, "bm25": [[3], [4]]}
    systems = [SystemRun(s.name, BASELINE, best[s.name], best[s.name]) if s.name in best else s for s in tiny.systems]
    table = markdown(score(EvalRun(tiny.dataset, tiny.config, systems), "agrag eval tiny"))
    assert table.count("vs rrf [95% CI]") == 1
    assert f"| text2cypher | — | — | — | — | — | — | skipped: {SKIP} |" in table
