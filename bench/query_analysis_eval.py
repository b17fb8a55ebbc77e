"""Benchmark: the rule-based query analysis against hand labels and the multi-hop dev sets.

* notes_dev (``bench/labels/notes_dev_query_analysis.jsonl``, 40 questions labelled by hand): answer-type accuracy,
  recall of the labelled names among the hints (a label counts when a hint is it or contains it, compared as
  ``normalize_name`` keys) and the hints that match no label, and recall of the labelled relations by verb lemma
  (``works`` finds ``works at``) and as exact phrases.
* HotpotQA and MuSiQue dev, first 100 questions each: answer-type accuracy against
  ``bench/labels/multihop_dev_answer_types.jsonl``, and the recall of the titles of the supporting passages that the
  question contains (a title counts when a hint is it or contains it).
* The time of one analysis (median over every question).

Run it with ``.venv/bin/python bench/query_analysis_eval.py [--bench-dir ../shared/bench] [--misses]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from agrag.components.data_models.entity import normalize_name
from agrag.components.data_models.query_analysis import QueryAnalysis
from agrag.components.extractors.relation_verbs import guess_past, known_verb
from agrag.components.retrievers.rule_query_analyzer import RuleQueryAnalyzer

LABELS = Path(__file__).resolve().parent / "labels"
SETS = {"hotpotqa_dev": "hotpotqa_dev/hotpotqa_train.json", "musique_dev": "musique_dev/musique_train.json"}
_QUALIFIER = re.compile(r"\s*\([^)]*\)$")


def _rows(name: str) -> list[dict[str, Any]]:
    with (LABELS / name).open(encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def _head(predicate: str) -> str:
    word = predicate.split(maxsplit=1)[0]
    known = known_verb(word)
    return known[0] if known is not None else guess_past(word) or word.removesuffix("s")


def _named(gold: str, hints: tuple[str, ...]) -> bool:
    key = normalize_name(gold)
    return any(f" {key} " in f" {normalize_name(hint)} " for hint in hints)


def _field(value: Any) -> Any:
    return ast.literal_eval(value) if isinstance(value, str) else value


def _supporting_titles(dataset: str, question: dict[str, Any]) -> set[str]:
    if dataset == "hotpotqa_dev":
        return {title for title, _ in _field(question["supporting_facts"])}
    return {p["title"] for p in _field(question["paragraphs"]) if p["is_supporting"]}


def notes_dev(analyzer: RuleQueryAnalyzer, misses: bool) -> dict[str, Any]:
    """The figures of notes_dev against its hand labels."""
    rows = _rows("notes_dev_query_analysis.jsonl")
    typed = names = extra = gold_names = related = exact = gold_relations = 0
    for row in rows:
        analysis = analyzer.analyze(row["question"])
        typed += analysis.answer_type.value == row["answer_type"]
        gold_names += len(row["entity_hints"])
        names += sum(_named(g, analysis.entity_hints) for g in row["entity_hints"])
        extra += sum(not any(_named(g, (h,)) for g in row["entity_hints"]) for h in analysis.entity_hints)
        heads = {_head(p) for p in analysis.relation_keywords}
        gold_relations += len(row["relation_keywords"])
        related += sum(_head(g) in heads for g in row["relation_keywords"])
        exact += len(set(row["relation_keywords"]) & set(analysis.relation_keywords))
        if misses and analysis.answer_type.value != row["answer_type"]:
            print(f"  notes_dev {row['index']}: {analysis.answer_type.value}, labelled {row['answer_type']}")
    return {
        "questions": len(rows),
        "answer_type": f"{typed}/{len(rows)}",
        "names_recall": f"{names}/{gold_names}",
        "hints_matching_no_label": extra,
        "relations_by_lemma": f"{related}/{gold_relations}",
        "relations_exact": f"{exact}/{gold_relations}",
    }


def multi_hop(analyzer: RuleQueryAnalyzer, bench_dir: Path, dataset: str, misses: bool) -> dict[str, Any]:
    """The figures of one multi-hop dev set: answer types against the labels, supporting titles among the hints."""
    labels = {
        row["index"]: row["answer_type"] for row in _rows("multihop_dev_answer_types.jsonl") if row["set"] == dataset
    }
    questions = json.loads((bench_dir / SETS[dataset]).read_text(encoding="utf-8"))[:100]
    typed = titles = found = hints = 0
    for index, question in enumerate(questions):
        analysis: QueryAnalysis = analyzer.analyze(question["question"])
        hints += len(analysis.entity_hints)
        typed += analysis.answer_type.value == labels[index]
        if misses and analysis.answer_type.value != labels[index]:
            print(f"  {dataset} {index}: {analysis.answer_type.value}, labelled {labels[index]}")
        key = f" {normalize_name(question['question'])} "
        for title in _supporting_titles(dataset, question):
            bare = _QUALIFIER.sub("", title)
            if f" {normalize_name(bare)} " in key:
                titles += 1
                found += _named(bare, analysis.entity_hints)
    return {
        "questions": len(questions),
        "answer_type": f"{typed}/{len(questions)}",
        "titles_found": f"{found}/{titles}",
        "hints": hints,
    }


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-dir", type=Path, default=Path("../shared/bench"))
    parser.add_argument("--misses", action="store_true", help="list the questions whose answer type is wrong")
    arguments = parser.parse_args()
    analyzer = RuleQueryAnalyzer()
    report: dict[str, Any] = {"notes_dev": notes_dev(analyzer, arguments.misses)}
    for dataset in SETS:
        report[dataset] = multi_hop(analyzer, arguments.bench_dir, dataset, arguments.misses)
    questions = [row["question"] for row in _rows("notes_dev_query_analysis.jsonl")]
    questions += [row["question"] for row in _rows("multihop_dev_answer_types.jsonl")]
    times = []
    for question in questions:
        started = time.perf_counter()
        analyzer.analyze(question)
        times.append((time.perf_counter() - started) * 1000)
    report["median_ms"] = round(statistics.median(times), 3)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
