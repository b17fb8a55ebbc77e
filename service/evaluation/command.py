"""What ``agrag eval`` does: pick the dataset, run, print the table, write the files."""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from agrag.components.errors import EvaluationError
from agrag.components.safe_text import printable
from agrag.flows.progress import stage_lines
from agrag.pipelines.config_loader import available_options, search_dirs
from agrag.pipelines.recipes import PRESETS, load_recipe
from agrag.pipelines.runtime import compose_config
from agrag.pipelines.settings import load_eval_settings, load_settings
from agrag.service.cli_support import SafeConsole
from agrag.service.evaluation.answer_runner import AGENT
from agrag.service.evaluation.converters import load_named
from agrag.service.evaluation.dataset import EvalDataset, load_generic
from agrag.service.evaluation.report import WrittenFiles, markdown, score, write
from agrag.service.evaluation.runner import EVAL_STORE_OVERRIDES, EvalInputs, run_evaluation, skip_reason

ALL_RECIPES = "all"


@dataclass(frozen=True, slots=True)
class DatasetChoice:
    """What the command line named: a set in the bench folder, or generic files (with optional triples)."""

    name: str | None = None
    corpus: Path | None = None
    questions: Path | None = None
    triples: Path | None = None


def pick_dataset(choice: DatasetChoice, bench_dir: Path) -> EvalDataset:
    """Load the chosen dataset; a contradictory or incomplete choice raises ``EvaluationError``."""
    if (choice.corpus is None) != (choice.questions is None):
        raise EvaluationError("Give both --corpus and --questions, or neither (and a dataset name).")
    if choice.corpus is not None and choice.questions is not None:
        if choice.name is not None:
            raise EvaluationError(f"Give either a dataset name ({choice.name!r}) or --corpus/--questions, not both.")
        return replace(load_generic(choice.corpus, choice.questions), triples_path=choice.triples)
    if choice.name is None:
        raise EvaluationError(
            "Name a dataset (musique_dev, hotpotqa_dev, notes_dev) "
            "or give --corpus corpus.json --questions questions.json."
        )
    if choice.triples is not None:
        raise EvaluationError("--triples goes with --corpus and --questions; the named sets know their own.")
    return load_named(choice.name, bench_dir)


def recipe_names(names: Sequence[str], user_dir: Path | None) -> list[str]:
    """``evaluation.recipes`` with ``all`` replaced by every recipe under conf/recipe (and the user's folder).

    ``all`` lists the shipped presets in their ``PRESETS`` order, then any other recipe file by name; a name given
    twice counts once.
    """
    found = available_options("recipe", search_dirs(user_dir))
    presets = [p.lower() for p in PRESETS if p.lower() in found]
    every = [*presets, *(name for name in found if name not in presets)]
    expanded = (every if name == ALL_RECIPES else [name] for name in names)
    return list(dict.fromkeys(name for group in expanded for name in group))


def evaluate(choice: DatasetChoice, overrides: Sequence[str], console: Console) -> WrittenFiles:
    """Run one evaluation end to end and print its table; returns where the files went."""
    eval_settings = load_eval_settings()
    all_overrides = [*EVAL_STORE_OVERRIDES, *overrides]
    settings = load_settings()
    config = compose_config(all_overrides, settings)
    names = recipe_names(config.evaluation.recipes, settings.agrag.config_dir)
    recipes = tuple(load_recipe(name) for name in names)  # a misspelled one fails before ingest
    if config.evaluation.answers and not settings.agrag.llm_base_url:
        raise EvaluationError(
            "evaluation.answers=true runs the built-in agent, which needs an LLM with tool calling: set "
            "AGRAG_LLM_BASE_URL (and AGRAG_LLM_MODEL), e.g. AGRAG_LLM_BASE_URL=http://localhost:11434/v1 "
            "AGRAG_LLM_MODEL=qwen2.5:7b after `ollama pull qwen2.5:7b`; or drop evaluation.answers=true."
        )
    chosen = pick_dataset(choice, eval_settings.bench_dir).head(config.evaluation.max_questions)
    skipped = {
        r.name: reason for r in recipes if (reason := skip_reason(r, settings.retrieval, settings.agrag)) is not None
    }
    console.print(
        f"Evaluating {chosen.name}: {len(chosen.questions)} questions over {len(chosen.corpus)} passages; "
        f"recipes {', '.join(names)}; cache {eval_settings.cache_dir}"
    )
    for name, reason in skipped.items():
        console.print(f"Skipping {name}: {reason}", markup=False, highlight=False)
    if config.evaluation.answers:
        gold = sum(1 for q in chosen.questions if q.answer is not None)
        console.print(
            f"Answering every question with the agent ({settings.agrag.llm_model} at {settings.agrag.llm_base_url}); "
            f"{gold} of {len(chosen.questions)} questions have a gold answer for EM and F1",
            markup=False,
            highlight=False,
        )
    inputs = EvalInputs(
        config=config,
        overrides=tuple(overrides),
        settings=settings,
        eval_settings=eval_settings,
        recipes=recipes,
        progress=sys.stderr.isatty(),
    )
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # Not a terminal (a pipe, a log file): no bars, but one line per ingestion stage and per recipe searched.
    lines = None if inputs.progress else sys.stderr
    with (
        Progress(*columns, console=SafeConsole(stderr=True), transient=True, disable=lines is not None) as progress,
        stage_lines(lines),
    ):
        bars: dict[str, TaskID] = {}

        def tick(label: str, done: int) -> None:
            total = len(chosen.questions)
            doing = "answering with the" if label == AGENT else "searching with"
            if label not in bars:
                bars[label] = progress.add_task(f"{doing} {label}", total=total)
                _line(lines, f"{doing} {label}: {total} questions")
            progress.update(bars[label], completed=done)
            if done == total:
                _line(lines, f"{doing} {label}: done")

        run = run_evaluation(chosen, inputs, tick)
    for label, ingest in run.ingests.items():
        if ingest is None:
            console.print(f"Store {label}: reused (corpus, settings and ingestion code unchanged)")
        else:
            seconds = sum(ingest.stage_seconds.values())
            console.print(f"Store {label}: ingested {ingest.chunks_written} chunks in {seconds:.0f} s")
    command = shlex.join(["agrag", "eval", *sys.argv[2:]]) if sys.argv[1:2] == ["eval"] else "agrag eval"
    report = score(run, command)
    console.print(markdown(report), markup=False, highlight=False, soft_wrap=True)
    files = write(report, eval_settings.results_dir)
    console.print(f"Wrote {files.markdown}, {files.json}, {files.questions} and {files.chart}")
    return files


def _line(stream: TextIO | None, text: str) -> None:
    if stream is not None:
        stream.write(f"{time.strftime('%H:%M:%S')} {printable(text, multiline=False)}\n")
        stream.flush()
