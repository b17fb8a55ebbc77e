"""Scores an evaluation run and writes it: a Markdown table, a JSON summary, per-question JSONL and a bar chart.

The JSON's ``recall_at_5`` maps every system (baseline, recipe or ``search_evidence`` mode) that ran to its strict
Recall@5, in percent: the one number to compare runs by. ``systems.<name>`` holds every metric, the expanded
diagnostic, the breakdown by question type, the searches with a failed method and, for recipes, the paired bootstrap
against the best baseline. A recipe that could not run here has ``systems.<name>.skipped`` (why) and an entry in
``skipped``; the table shows it as a row that says why, and the chart and the per-question lines leave it out. With
``evaluation.answers=true`` the JSON's ``answers`` holds the agent's answer scores (``answer_scores``), the Markdown a
section on them, and the per-question lines one line per question of ``system`` ``agent``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agrag.service.evaluation.answer_scores import (
    AnswerScores,
    answer_lines,
    answers_json,
    answers_markdown,
    score_answers,
)
from agrag.service.evaluation.metrics import (
    HEADLINE_K,
    PairedBootstrap,
    average,
    by_type,
    paired_bootstrap,
    question_scores,
)
from agrag.service.evaluation.runner import BASELINE, RRF_BASELINE, EvalRun, SystemRun

HEADLINE = f"recall@{HEADLINE_K}"


@dataclass(frozen=True, slots=True)
class SystemScores:
    """The scores of one system."""

    name: str
    kind: str
    strict: dict[str, float]
    expanded: dict[str, float]
    by_type: dict[str, dict[str, float]]
    rows: list[dict[str, float]]
    versus_best_baseline: PairedBootstrap | None
    skipped: str | None = None
    failed: int = 0
    failure: str = ""
    versus_rrf: PairedBootstrap | None = None


@dataclass(frozen=True, slots=True)
class EvalReport:
    """A scored run."""

    run: EvalRun
    scores: list[SystemScores]
    best_baseline: str
    created: datetime
    command: str
    answers: AnswerScores | None = None


def score(run: EvalRun, command: str) -> EvalReport:
    """Score every system; recipes get a paired bootstrap of Recall@5 against the best baseline."""
    ks, questions = run.config.evaluation.ks, run.dataset.questions
    base: list[SystemScores] = []
    for system in run.systems:
        if system.skipped is not None:
            base.append(SystemScores(system.name, system.kind, {}, {}, {}, [], None, skipped=system.skipped))
            continue
        rows = [question_scores(r, q, ks) for r, q in zip(system.strict, questions, strict=True)]
        wide = [question_scores(r, q, ks) for r, q in zip(system.expanded, questions, strict=True)]
        by = by_type(rows, questions)
        base.append(
            SystemScores(
                system.name,
                system.kind,
                average(rows),
                average(wide),
                by,
                rows,
                None,
                None,
                system.failed,
                system.failure,
            )
        )
    baselines = [s for s in base if s.kind == BASELINE]
    best = max(baselines, key=lambda s: s.strict[HEADLINE])
    reference = [row[HEADLINE] for row in best.rows]
    samples, seed = run.config.evaluation.bootstrap_samples, run.config.evaluation.seed
    # The fused baseline is the one a fused recipe must beat, even when a single leg of it scores higher.
    fused = next((s for s in baselines if s.name == RRF_BASELINE), None)
    fused_reference = None if fused is None else [row[HEADLINE] for row in fused.rows]
    scored = []
    for s in base:
        if s.kind == BASELINE or s.skipped is not None:
            scored.append(s)
            continue
        mine = [row[HEADLINE] for row in s.rows]
        scored.append(
            replace(
                s,
                versus_best_baseline=paired_bootstrap(mine, reference, samples, seed),
                versus_rrf=None if fused_reference is None else paired_bootstrap(mine, fused_reference, samples, seed),
            )
        )
    answers = None if run.answers is None else score_answers(run.answers, run.dataset.questions)
    return EvalReport(run, scored, best.name, datetime.now(UTC), command, answers)


def _ran(report: EvalReport) -> list[SystemScores]:
    return [s for s in report.scores if s.skipped is None]


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _delta(test: PairedBootstrap | None) -> str:
    if test is None:
        return ""
    return f"{test.difference:+.1f} [{test.low:+.1f}, {test.high:+.1f}], p={test.p_not_better:.3f}"


def markdown(report: EvalReport) -> str:
    """The results table, then the breakdown by question type."""
    run = report.run
    ran = _ran(report)
    metrics = list(ran[0].strict)  # the baselines always run
    # The RRF column only when RRF is not already the best baseline.
    versus_rrf = report.best_baseline != RRF_BASELINE
    comparisons = [report.best_baseline, *([RRF_BASELINE] if versus_rrf else [])]
    header = [
        "system",
        *metrics,
        f"expanded R@{HEADLINE_K}",
        *(f"Δ R@{HEADLINE_K} vs {name} [95% CI], p" for name in comparisons),
    ]
    lines = [
        f"**{run.dataset.name}**: {len(run.dataset.questions)} questions, {len(run.dataset.corpus)} passages, "
        f"{report.created:%Y-%m-%d}. Strict scoring (passage hits only); `{report.command}`",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for s in report.scores:
        if s.skipped is not None:
            lines.append(
                "| "
                + " | ".join(
                    [
                        s.name,
                        *("—" for _ in metrics),
                        "—",
                        *("—" for _ in comparisons[1:]),
                        "skipped: " + s.skipped.replace("|", "\\|"),
                    ]
                )
                + " |"
            )
            continue
        expanded = "" if s.kind == BASELINE else _cell(s.expanded.get(HEADLINE))
        deltas = [_delta(s.versus_best_baseline), *([_delta(s.versus_rrf)] if versus_rrf else [])]
        lines.append("| " + " | ".join([s.name, *(_cell(s.strict[m]) for m in metrics), expanded, *deltas]) + " |")
    failed = [s for s in ran if s.failed]
    if failed:
        lines.append("")
        lines += [
            f"{s.name}: a method failed in {s.failed} of {len(run.dataset.questions)} searches (a search where every "
            f"method failed scores an empty list); first: {s.failure}"
            for s in failed
        ]
    types = list(ran[0].by_type)
    if len(types) > 1:
        counts = ran[0].by_type
        lines += ["", f"Recall@{HEADLINE_K} by question type:", ""]
        lines.append("| system | " + " | ".join(f"{t} (n={int(counts[t]['n'])})" for t in types) + " |")
        lines.append("|---|" + "---|" * len(types))
        for s in ran:
            lines.append(f"| {s.name} | " + " | ".join(_cell(s.by_type[t][HEADLINE]) for t in types) + " |")
    if report.answers is not None:
        lines += ["", answers_markdown(report.answers).rstrip("\n")]
    return "\n".join(lines) + "\n"


def summary_json(report: EvalReport) -> dict[str, Any]:
    """The JSON summary (see the module docstring for its keys)."""
    run = report.run
    return {
        "dataset": run.dataset.name,
        "created": report.created.isoformat(timespec="seconds"),
        "command": report.command,
        "questions": len(run.dataset.questions),
        "passages": len(run.dataset.corpus),
        "corpus_sha256": run.dataset.corpus_hash,
        "config": json.loads(run.config.model_dump_json()),
        "best_baseline": report.best_baseline,
        "recall_at_5": {s.name: round(s.strict[HEADLINE], 2) for s in _ran(report)},
        "skipped": {s.name: s.skipped for s in report.scores if s.skipped is not None},
        "systems": {s.name: _system_json(s) for s in report.scores},
        "seconds": _rounded(run.seconds),
        "answers": None if report.answers is None else answers_json(report.answers),
    }


def _system_json(s: SystemScores) -> dict[str, Any]:
    if s.skipped is not None:
        return {"kind": s.kind, "skipped": s.skipped}
    return {
        "kind": s.kind,
        "strict": _rounded(s.strict),
        "expanded": _rounded(s.expanded),
        "by_type": {t: _rounded(v) for t, v in s.by_type.items()},
        "failed_searches": s.failed,
        "versus_best_baseline": None if s.versus_best_baseline is None else asdict(s.versus_best_baseline),
        "versus_rrf": None if s.versus_rrf is None else asdict(s.versus_rrf),
    }


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 2) for k, v in values.items()}


def question_lines(report: EvalReport) -> list[str]:
    """One JSON line per (system, question): the ranked passages and the question's scores, for diffing runs."""
    lines = []
    systems: dict[str, SystemRun] = {s.name: s for s in report.run.systems}
    for s in _ran(report):
        system = systems[s.name]
        for i, (question, row) in enumerate(zip(report.run.dataset.questions, s.rows, strict=True)):
            record = {
                "system": s.name,
                "question_index": i,
                "question": question.question,
                "type": question.type,
                "gold": list(question.gold),
                "ranked": system.strict[i],
                "expanded": system.expanded[i],
                **row,
            }
            lines.append(json.dumps(record, ensure_ascii=False))
    if report.run.answers is not None:
        lines += answer_lines(report.run.answers, report.run.dataset.questions)
    return lines


def chart(report: EvalReport, path: Path) -> None:
    """A grouped bar chart of Recall@k per system."""
    import matplotlib  # noqa: PLC0415 - an optional dependency, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ran = _ran(report)
    metrics = [m for m in ran[0].strict if m.startswith("recall@")]
    width = 0.8 / len(ran)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.6 * len(metrics) * len(ran) ** 0.5), 4.0))
    for n, s in enumerate(ran):
        positions = [i + n * width for i in range(len(metrics))]
        bars = axes.bar(positions, [s.strict[m] for m in metrics], width, label=s.name)
        axes.bar_label(bars, fmt="%.0f", fontsize=7)
    axes.set_xticks([i + width * (len(ran) - 1) / 2 for i in range(len(metrics))], [m.capitalize() for m in metrics])
    axes.set_ylabel("% of gold passages retrieved")
    axes.set_ylim(0, 100)
    axes.set_title(
        f"{report.run.dataset.name}: {len(report.run.dataset.questions)} questions ({report.created:%Y-%m-%d})"
    )
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


@dataclass(frozen=True, slots=True)
class WrittenFiles:
    """Where a report was written."""

    markdown: Path
    json: Path
    questions: Path
    chart: Path


def write(report: EvalReport, folder: Path) -> WrittenFiles:
    """Write the four files under ``folder``, named by dataset and time, and return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"{report.run.dataset.name}-{report.created:%Y%m%d-%H%M%S}"
    files = WrittenFiles(
        stem.with_suffix(".md"), stem.with_suffix(".json"), Path(f"{stem}.questions.jsonl"), stem.with_suffix(".png")
    )
    files.markdown.write_text(markdown(report), encoding="utf-8")
    files.json.write_text(json.dumps(summary_json(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    files.questions.write_text("\n".join(question_lines(report)) + "\n", encoding="utf-8")
    chart(report, files.chart)
    return files
