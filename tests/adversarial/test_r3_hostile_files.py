"""Hostile files and hostile file names, and stopping a CLI ingestion (issue 43: defect 6 and part of defect 9).

Defect 6: three files of thousands of chunks each (one long line, nested headings, a repetitive HTML page) held a
folder's ten good notes hostage for minutes; now a default per-file chunk cap refuses each of them as one failed row
naming the override that raises the cap, and the good notes commit. The files are generated small here
(``tests/support/hostile_files.py``, scale 0.1: 2 MB, 490 KB and 1 MB), past the same cap. Defect 9: an escaping
symlink no longer fails a root-wide preview; a newline in a file name is shown escaped wherever a name is printed or
logged; SIGTERM or Ctrl+C of `agrag ingest` (in-process, signalled as a terminal or a supervisor signals: its whole
process group) ends it with one summary line and no traceback, and the same command resumes.
"""

from __future__ import annotations

import io
import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL
from typer.testing import CliRunner

from agrag.components.data_models.chunk import Chunk
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.file_preview import preview_files
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.safe_text import install_log_escaping
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.flows.ingest_report import FileStatus, IngestReport
from agrag.flows.ingest_report_markdown import ingest_report_markdown
from agrag.flows.ingest_tasks import Phase, chunk_documents, document_key
from agrag.flows.plan_groups import over_chunk_limit
from agrag.flows.run_outcome import ingest_summary
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.ingest_plans import plan_for
from agrag.pipelines.runtime import open_runtime
from agrag.service.cli import app
from agrag.service.cli_support import SafeConsole
from agrag.service.console import file_status_table
from tests.conftest import EXAMPLES
from tests.support.hostile_files import HOSTILE, NESTED_HEADINGS, REPETITIVE_HTML, make_hostile_folder
from tests.support.isolated_settings import isolated_settings

AGRAG = str(Path(sys.executable).with_name("agrag"))
DEFAULT_CAP = 1000
OVERRIDE = "ingest.plan.limits.max_chunks_per_file"
NEWLINE_NAME = "good\nname.md"
EMPTY_NEWLINE_NAME = "empty\nfile.md"
SUFFIXES = (".md", ".txt", ".html")
HASHED = "embedder=hashed"  # the signal tests: no model to load, no text for a model to embed before the write


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A user's shell: no AGRAG_ settings but the data dir, no Prefect API, no terminal width."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_", "PREFECT_API_"))}
    env.pop("COLUMNS", None)
    return {**env, "AGRAG_DATA_DIR": str(data_dir), "PREFECT_HOME": str(data_dir.parent / "prefect"), **extra}


def stored_paths(data_dir: Path, embedder: SentenceTransformersTextEmbedder | None, *overrides: str) -> set[str]:
    with open_runtime(overrides, isolated_settings(data_dir), embedder=embedder) as runtime:
        return {d.source_path for d in runtime.store.graph.documents(None, offset=0, limit=1000)}


# defect 6: hostile files hold an ingestion hostage


def test_r3_defect_6_the_default_chunk_cap_is_1000_and_its_message_names_the_override() -> None:
    """The cap is on by default (1,000, as the FalkorDB toolkit's spec); the refusal gives the count and the fix."""
    ingest = load_config([]).ingest
    assert ingest.plan.limits.max_chunks_per_file == DEFAULT_CAP
    assert load_config([f"{OVERRIDE}=null"]).ingest.plan.limits.max_chunks_per_file is None, "null: no cap"
    plans = {"d1": plan_for("big.md", ingest), "d2": plan_for("small.md", ingest)}
    chunks = [Chunk(f"d1.v.{i}", "d1", "v", "x", (), i, 0, 1) for i in range(DEFAULT_CAP + 5)]
    chunks += [Chunk(f"d2.v.{i}", "d2", "v", "x", (), i, 0, 1) for i in range(DEFAULT_CAP)]
    refused = over_chunk_limit(chunks, plans, ingest.plan.limits.max_chunks_per_file)
    assert list(refused) == ["d1"], "a file at the cap is ingested, one over it is refused"
    assert "1,005 chunks" in refused["d1"] and f"over {OVERRIDE}=1000" in refused["d1"]
    assert f"{OVERRIDE}=1005" in refused["d1"], "the fix: the override that raises the cap enough for this file"


def test_r3_defect_6_a_file_over_the_cap_leaves_no_chunks_in_the_phase_journal(tmp_path: Path) -> None:
    """Its chunks are counted, not kept: the probe's three files would have left 71 MB of journal behind."""
    folder = make_hostile_folder(tmp_path / "hostile", scale=0.02, good=1)
    ingest = load_config([]).ingest
    loaded = FolderLoader().run(root=str(folder.root))["documents"]
    journal = SqlitePhaseJournal(tmp_path / "phases.sqlite")
    out = chunk_documents.fn(loaded, ingest, Phase(journal, "hash"))
    counts = Counter(c.document_id for c in out.value)
    over = {d.document.id for d in loaded if counts[d.document.id] > DEFAULT_CAP}
    assert {d.document.source_path for d in loaded if d.document.id in over} == {NESTED_HEADINGS, REPETITIVE_HTML}
    keys = {d.document.id: document_key(Phase(journal, "hash"), "chunk", d) for d in loaded}
    kept = journal.load_many(list(keys.values()))
    assert {doc_id for doc_id, key in keys.items() if key in kept} == set(keys) - over


def test_r3_defect_6_files_over_the_default_chunk_cap_fail_alone_and_the_good_files_commit(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> None:
    """`agrag ingest --files` through a pipe, default settings, ten notes beside three hostile files: three failed
    rows, ten stored. Two more files have a newline in their names (defect 9): the stage lines, the failed line and
    the file table show it as ``\\u000a``, and the stored name keeps it."""
    folder = make_hostile_folder(tmp_path / "hostile", scale=0.1)
    (folder.root / NEWLINE_NAME).write_text("# Good\n\nAda Varga wrote the Orion notes.\n", encoding="utf-8")
    (folder.root / EMPTY_NEWLINE_NAME).write_text("", encoding="utf-8")
    data_dir = tmp_path / "data"
    started = time.monotonic()
    result = subprocess.run(
        [AGRAG, "ingest", str(folder.root), "--files"],
        capture_output=True,
        text=True,
        env=cli_env(data_dir, PREFECT_API_URL=str(PREFECT_API_URL.value())),
        cwd=tmp_path,
        timeout=420,  # before the fix: about 20,000 chunks to extract and embed, far longer than this
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in output
    flat = " ".join(output.split())
    assert f"11 new or changed, 0 unchanged, {len(HOSTILE) + 1} failed" in flat
    for name in HOSTILE:
        refusal = re.search(rf"failed {re.escape(name)}: ([\d,]+) chunks .*? over {OVERRIDE}=1000", flat)
        assert refusal is not None, (name, flat)
        count = int(refusal.group(1).replace(",", ""))
        assert count > DEFAULT_CAP and f"{OVERRIDE}={count}" in flat, "the fix names the cap this file needs"
    assert "failed empty\\u000afile.md: empty file" in output and "good\\u000aname.md" in output
    assert not _lines_starting_with_the_name_tail(output), output
    stored = stored_paths(data_dir, embedder)
    assert stored == {*folder.good, NEWLINE_NAME}, "every good note committed, no hostile file, names kept exactly"
    print(f"hostile folder at scale 0.1 ingested in {time.monotonic() - started:.1f} s")


# defect 9: an escaping symlink fails every root-wide preview


def test_r3_defect_9_an_escaping_symlink_is_skipped_with_a_note_in_a_root_wide_preview(tmp_path: Path) -> None:
    """`**/*` over a root holding a symlinked file and folder leading outside: the rest is previewed, each named."""
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNot for you.\n", encoding="utf-8")
    (root / "notes" / "team.md").write_bytes((EXAMPLES / "team.md").read_bytes())
    (root / "notes" / "leak.md").symlink_to(outside / "secret.md")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    for patterns in ([], ["**/*"], ["**/*.md"], ["notes/*.md"]):
        page = preview_files(patterns, root, SUFFIXES)
        assert [f.path for f in page.files] == ["notes/team.md"], patterns
        assert "Not for you" not in page.model_dump_json()
        assert any("notes/leak.md" in note and "outside the files root" in note for note in page.notes), page.notes
    everything = preview_files([], root, SUFFIXES)
    assert any(note.startswith("escape/secret.md") for note in everything.notes), everything.notes
    shown = CliRunner().invoke(app, ["preview"], env={"AGRAG_FILES_ROOT": str(root), "COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "notes/team.md" in shown.output and "skipped notes/leak.md" in shown.output
    assert "Not for you" not in shown.output
    named = CliRunner().invoke(app, ["preview", "notes/leak.md"], env={"AGRAG_FILES_ROOT": str(root)})
    assert named.exit_code == 1 and "leads outside the files root" in named.output, "naming the link is refused"


# defect 9: a newline in a file name is printed raw


def _lines_starting_with_the_name_tail(text: str) -> list[str]:
    """Output lines that start where a raw newline inside the two names would start one."""
    return [line for line in text.splitlines() if line.lstrip("│┃ ").startswith(("name.md", "file.md"))]


def test_r3_defect_9_a_newline_in_a_file_name_is_shown_escaped_in_reports_and_logs(tmp_path: Path) -> None:
    """The report's lines and file table, the run's summary and markdown, a preview heading and a log line."""
    report = IngestReport(
        folder="notes",
        documents_seen=1,
        documents_ingested=1,
        documents_unchanged=0,
        failures=(),
        files=(FileStatus(NEWLINE_NAME, "ingested"), FileStatus(EMPTY_NEWLINE_NAME, "failed", "empty file")),
    )
    console = SafeConsole(file=io.StringIO(), width=120)
    console.print(file_status_table(report.files))
    table = console.file.getvalue()  # type: ignore[attr-defined]
    assert "good\\u000aname.md" in table and not _lines_starting_with_the_name_tail(table), table
    failed = IngestReport("notes", 1, 0, 0, (FileFailure(EMPTY_NEWLINE_NAME, "empty file"),))
    assert "\n" not in ingest_summary(failed) and "empty\\u000afile.md" in ingest_summary(failed)
    markdown = ingest_report_markdown(report, str(tmp_path / "data"))
    assert not _lines_starting_with_the_name_tail(markdown) and "good\\u000aname.md" in markdown
    root = tmp_path / "root"
    root.mkdir()
    (root / NEWLINE_NAME).write_text("# Note\n\nAda Varga wrote it.\n", encoding="utf-8")
    shown = CliRunner().invoke(app, ["preview"], env={"AGRAG_FILES_ROOT": str(root), "COLUMNS": "200"})
    assert shown.exit_code == 0 and "good\\u000aname.md" in shown.output, shown.output
    assert not _lines_starting_with_the_name_tail(shown.output), shown.output
    install_log_escaping()
    record = io.StringIO()
    handler = logging.StreamHandler(record)
    logger = logging.getLogger("agrag.tests.r3_defect_9")
    logger.addHandler(handler)
    try:
        logger.warning("%s failed: %s", EMPTY_NEWLINE_NAME, "empty file")
        logger.warning("a message of two lines\nkeeps its newline")
    finally:
        logger.removeHandler(handler)
    assert record.getvalue() == "empty\\u000afile.md failed: empty file\na message of two lines\nkeeps its newline\n"


# defect 9: SIGTERM of a CLI ingestion: tracebacks and no summary


def _start_ingest(folder: Path, data_dir: Path, cwd: Path, **env: str) -> subprocess.Popen[str]:
    """`agrag ingest` in a process group of its own (as a shell job), writing small commit batches."""
    return subprocess.Popen(
        [AGRAG, "ingest", str(folder), HASHED, "ingest.write_batch_chunks=2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=cli_env(data_dir, **env),
        cwd=cwd,
        start_new_session=True,
    )


def _read_until(process: subprocess.Popen[str], marker: str, timeout: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            pytest.fail(f"agrag ended ({process.wait()}) before {marker!r}: {''.join(lines)}")
        lines.append(line)
        if marker in line:
            return lines
    pytest.fail(f"no {marker!r} within {timeout} s: {''.join(lines)}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.needs_prefect  # runs `agrag ingest` in a subprocess
def test_r3_defect_9_sigterm_or_ctrl_c_ends_a_cli_ingest_with_one_summary_line_and_it_resumes(
    sig: signal.Signals, tmp_path: Path, prefect_harness: None
) -> None:
    """The signal reaches the whole process group during the write stage, as from a terminal or a supervisor.

    Under SIGTERM the command starts its private Prefect server, which must outlive the signal to its group; the
    SIGINT run and the run that resumes use the session's server (one start less each). The runs embed with
    ``embedder=hashed``: what a signal does to the write stage does not depend on the model, whose loading and
    embedding of the example corpus took 8 s of CPU per test."""
    session = {"PREFECT_API_URL": str(PREFECT_API_URL.value())}
    folder = tmp_path / "notes"
    folder.mkdir()
    for source in EXAMPLES.iterdir():
        (folder / source.name).write_bytes(source.read_bytes())
    data_dir = tmp_path / "data"
    process = _start_ingest(folder, data_dir, tmp_path, **({} if sig == signal.SIGTERM else session))
    try:
        before = _read_until(process, "write started", timeout=240)
        os.killpg(process.pid, sig)
        signalled = time.monotonic()
        rest, _ = process.communicate(timeout=60)
        took = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = "".join(before) + rest
    assert process.returncode == 128 + sig, output
    assert "Traceback" not in output and "EventsWorker" not in output and "Error" not in output, output
    summary = [line for line in rest.splitlines() if "interrupted" in line.lower()]
    assert len(summary) == 1, rest
    committed = r"(\d+ of 9 new or changed documents committed|before committing any of its 9 new or changed)"
    assert re.search(committed, summary[0]), summary[0]
    assert "the same command" in summary[0], summary[0]
    assert took < 30, f"the run took {took:.1f} s to stop"
    if sig == signal.SIGTERM:  # the same command resumes and ends with every file stored
        again = subprocess.run(
            [AGRAG, "ingest", str(folder), HASHED],
            capture_output=True,
            text=True,
            env=cli_env(data_dir, **session),
            cwd=tmp_path,
            timeout=300,
            check=False,
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(stored_paths(data_dir, None, HASHED)) == len(list(EXAMPLES.iterdir()))
