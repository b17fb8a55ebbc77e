"""What the user sees and what keeps running, under hostile input (issue 15, defects 7, 8, 10, 12 and part of 11).

The CLI is read as a pipe gets it (a subprocess with stdout and stderr to pipes, no COLUMNS), and through every
entry point: in-process, through `agrag serve`, over HTTP. Kill tests kill -9 a real `agrag` subprocess and look for
its Prefect server among the processes. Each test also checks that nothing stored before was lost.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError, ConfigFileError, EvidenceError, QueryTextError
from agrag.components.safe_text import install_log_escaping, printable
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import FileStatus
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.runtime import open_runtime
from agrag.pipelines.settings import Settings
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.cli import app
from agrag.service.cli_support import PIPE_WIDTH, SafeConsole
from agrag.service.console import file_status_table
from agrag.service.server.private_prefect import reap_orphans
from tests.conftest import EXAMPLES
from tests.service.server.test_serve_command import Serve, serve_env
from tests.support.data_dir_copy import copy_data_dir
from tests.support.isolated_settings import isolated_settings
from tests.support.served_api import uvicorn_in_thread

AGRAG = str(Path(sys.executable).with_name("agrag"))
ADMIN = "admin-token-0123456789abcdef"
OWNER = "owner-token-0123456789abcdef"
QUESTION = "Who wrote the Orion Planner?"
SEARCHED = "Orion Planner launch checklist"
HOSTILE_NAME = "launch\x1b[31mnotes.md"
HOSTILE_TEXT = (
    "# Launch \x1b]0;pwned\x07 notes \u202eevil\n\n"
    "Maria Chen wrote the \x1b[2J Orion Planner launch checklist.\rForged line \x9b1m and a \x1b[5m blink.\n"
)
# What must never reach a terminal raw: C0 controls but newline and tab, DEL, C1 controls, bidi overrides.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
BAD_YAML = "methods: [entity\nlimit: 3\n"
PREFECT_SERVER = "prefect.server.api.server:create_app"


def settings_of(data_dir: Path) -> Settings:
    return isolated_settings(data_dir)


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    """Two example notes and one whose name, title and text hold terminal control sequences, ingested once."""
    root = tmp_path_factory.mktemp("output")
    folder = root / "notes"
    folder.mkdir()
    for name in ("orion_planner.md", "team.md"):
        shutil.copy(EXAMPLES / name, folder / name)
    (folder / HOSTILE_NAME).write_text(HOSTILE_TEXT, encoding="utf-8")
    data_dir = root / "data"
    with open_runtime([], settings_of(data_dir), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder)
    return data_dir


@pytest.fixture
def data_dir(corpus: Path, tmp_path: Path) -> Path:
    """A private copy of the corpus (the CLI and servers open a data dir themselves)."""
    return copy_data_dir(corpus, tmp_path / "data")


@pytest.fixture(scope="module")
def piped_search(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """`agrag search ... --trace` into a pipe, once: what `agrag search ... > file` writes (defects 10 and 12)."""
    root = tmp_path_factory.mktemp("piped")
    data_dir = copy_data_dir(corpus, root / "data")
    # hybrid: its table has entity rows as well as passages
    result = piped("search", SEARCHED, "recipe=hybrid", "--trace", env=cli_env(data_dir), cwd=root)
    assert result.returncode == 0, result.stderr
    return result


def stored(data_dir: Path, embedder: SentenceTransformersTextEmbedder) -> dict[str, int]:
    """The row counts of every table of the data dir: what a test must find unchanged."""
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        return runtime.store.graph.counts()


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A user's shell: no AGRAG_ settings but the data dir, no Prefect API, no terminal width."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_", "PREFECT_API_"))}
    env.pop("COLUMNS", None)
    return {**env, "AGRAG_DATA_DIR": str(data_dir), "PREFECT_HOME": str(data_dir.parent / "prefect"), **extra}


def piped(*args: str | bytes, env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``agrag`` with stdout and stderr to pipes, as `agrag ... | less` or `> file` gets it."""
    return subprocess.run(
        [AGRAG, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=180, check=False
    )


def flat(text: str) -> str:
    return " ".join(text.split())


# defect 7: orphaned Prefect servers


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _argv(pid: int) -> list[str]:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0"))[:-1]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as ended)."""
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def _prefect_server_of(process: subprocess.Popen[str], timeout: float = 90) -> int:
    """The pid of the Prefect server ``process`` started, once it runs uvicorn (not a launcher any more)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in _children(process.pid):
            argv = _argv(child)
            if argv[1:3] == ["-m", "uvicorn"] and PREFECT_SERVER in argv:
                return child
        if process.poll() is not None:
            pytest.fail(f"agrag ended ({process.returncode}) before starting Prefect: {process.communicate()}")
        time.sleep(0.05)
    pytest.fail(f"agrag started no Prefect server within {timeout} s")


@pytest.mark.parametrize("command", ["ingest", "delete"])
def test_defect_7_kill_9_of_agrag_leaves_no_prefect_server_running(
    command: str, data_dir: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    """kill -9 of `agrag ingest` / `agrag delete` (in-process, no server): its Prefect server ends with it."""
    before = stored(data_dir, embedder)
    notes = tmp_path / "more"
    notes.mkdir()
    (notes / "pump.md").write_text("# Pump\n\nThe Kestrel Pump Station was commissioned by Ilse Varga.\n")
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        document = runtime.store.graph.documents(limit=1)[0].id
    args = ["ingest", str(notes)] if command == "ingest" else ["delete", document]
    process = subprocess.Popen(
        [AGRAG, *args], env=cli_env(data_dir), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    server = _prefect_server_of(process)
    try:
        process.kill()
        process.wait(timeout=30)
        deadline = time.monotonic() + 15
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(server), f"the Prefect server {server} of the killed `agrag {command}` still runs"
    finally:
        if _alive(server):
            os.kill(server, signal.SIGKILL)
    assert stored(data_dir, embedder) == before, "nothing stored was lost"


def _orphan(*argv: str) -> tuple[int, int]:
    """A process whose parent has exited, like a server whose agrag was killed: (its pid, its dead parent's pid)."""
    spawn = (
        "import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid, os.getpid())"
    )
    parent = subprocess.run([sys.executable, "-c", spawn, *argv], capture_output=True, text=True, check=True)
    pid, parent_pid = map(int, parent.stdout.split())
    return pid, parent_pid


def _start_ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


@pytest.mark.needs_prefect  # starts a Prefect server's stand-in in a subprocess
def test_defect_7_the_next_start_ends_a_prefect_server_left_by_a_crash(tmp_path: Path) -> None:
    """A recorded server whose parent is gone is ended; one still run by its parent, or a reused pid, is not."""
    home = tmp_path / "prefect"
    records = home / "agrag-servers"
    records.mkdir(parents=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    orphan, orphan_parent = _orphan(*sleeper, PREFECT_SERVER)
    reused, reused_parent = _orphan(*sleeper, PREFECT_SERVER)  # a pid the record names, but started at another time
    other, other_parent = _orphan(*sleeper, "not-prefect")  # not a Prefect server at all
    with subprocess.Popen([*sleeper, PREFECT_SERVER]) as kept:  # its parent (this test) still runs it
        try:
            for pid, parent, ticks in (
                (orphan, orphan_parent, _start_ticks(orphan)),
                (reused, reused_parent, _start_ticks(reused) - 1),
                (other, other_parent, _start_ticks(other)),
                (kept.pid, os.getpid(), _start_ticks(kept.pid)),
            ):
                (records / f"{pid}.json").write_text(json.dumps({"pid": pid, "parent": parent, "started": ticks}))
            (records / "999999999.json").write_text("{not json")
            assert reap_orphans(home, timeout=5) == [orphan]
            assert not _alive(orphan)
            assert _alive(reused) and _alive(other) and _alive(kept.pid)
            assert sorted(p.name for p in records.iterdir()) == [f"{kept.pid}.json"], "records of ended ones go"
        finally:
            kept.kill()
            for pid in (orphan, reused, other):
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)


# defect 8: tracebacks instead of messages


@pytest.mark.parametrize(
    ("content", "problem"),
    [(BAD_YAML.encode(), "expected ',' or ']'"), ("methods: [entity]\nname: caf\xe9\n".encode("latin-1"), "0xe9")],
)
def test_defect_8_a_malformed_or_non_utf8_recipe_names_the_file_and_line(
    content: bytes, problem: str, tmp_path: Path
) -> None:
    """In-process: a ``ConfigFileError`` naming the file and line 2, never a YAML or Unicode traceback."""
    (tmp_path / "conf" / "recipe").mkdir(parents=True)
    recipe = tmp_path / "conf" / "recipe" / "mine.yaml"
    recipe.write_bytes(content)
    with pytest.raises(ConfigFileError) as raised:
        load_config(["recipe=mine"])
    assert raised.value.path == recipe or str(raised.value.path) == str(recipe)
    assert raised.value.line == 2 and problem in str(raised.value)
    with pytest.raises(ConfigFileError):
        load_recipe("mine")
    assert load_config(["recipe=hybrid"]).recipe.name == "hybrid", "another recipe still loads"


def test_defect_8_evidence_check_of_a_missing_binary_or_folder_path_is_a_message(tmp_path: Path) -> None:
    """`agrag evidence check` on a path it cannot read: exit 1 and one line saying why, no traceback."""
    (tmp_path / "binary.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00")
    runner = CliRunner()
    cases = {"missing.txt": "does not exist", str(tmp_path): "is a folder", "binary.bin": "not UTF-8 text (byte 0xff"}
    for path, reason in cases.items():
        result = runner.invoke(app, ["evidence", "check", path])
        assert result.exit_code == 1, (path, result.output)
        assert "Traceback" not in result.output and reason in flat(result.output), (path, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    from_stdin = runner.invoke(app, ["evidence", "check", "-"], input=b"draft \xff answer")
    assert from_stdin.exit_code == 1 and "standard input" in flat(from_stdin.output)


def test_defect_8_a_failing_method_is_one_log_line_and_a_trace_row(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One method failing: one warning line on stderr (not ~50 lines of chained tracebacks), its row on the trace;
    `agrag --verbose` shows the traceback. The query holds an ESC: the log line shows it escaped (defect 10)."""
    (tmp_path / "conf" / "recipe").mkdir(parents=True)
    (tmp_path / "conf" / "recipe" / "with_llm.yaml").write_text("methods: [entity, text2cypher]\nlimit: 3\n")
    env = cli_env(data_dir, AGRAG_LLM_BASE_URL="http://127.0.0.1:9/v1", AGRAG_LLM_MODEL="m", AGRAG_LLM_MAX_RETRIES="0")
    query = "Who wrote the \x1b[2J Orion Planner?"
    quiet = piped("search", query, "recipe=with_llm", "--trace", env=env, cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    lines = quiet.stderr.strip().splitlines()
    assert len(lines) == 1 and "text2cypher failed" in lines[0] and "LLMError" in lines[0], quiet.stderr
    assert re.search(r"text2cypher\s+│\s+FAILED", quiet.stdout), quiet.stdout
    assert "Orion Planner" in quiet.stdout and not RAW_CONTROL.search(quiet.stdout + quiet.stderr)
    monkeypatch.chdir(tmp_path)
    for key in ("AGRAG_DATA_DIR", "AGRAG_LLM_BASE_URL", "AGRAG_LLM_MODEL", "AGRAG_LLM_MAX_RETRIES"):
        monkeypatch.setenv(key, env[key])
    agrag_log = logging.getLogger("agrag")
    kept = (agrag_log.handlers[:], agrag_log.level, agrag_log.propagate)
    try:
        verbose = CliRunner().invoke(app, ["--verbose", "search", query, "recipe=with_llm"])
    finally:  # --verbose sends agrag's DEBUG lines to stderr: later tests of this worker would print theirs
        agrag_log.handlers, agrag_log.propagate = kept[0], kept[2]
        agrag_log.setLevel(kept[1])
    assert verbose.exit_code == 0 and "Traceback" in verbose.stderr, verbose.output


# defect 10: terminal injection


def test_defect_10_control_characters_from_data_are_shown_escaped(
    data_dir: Path,
    embedder: SentenceTransformersTextEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    piped_search: subprocess.CompletedProcess[str],
) -> None:
    """A file name, title and text holding ESC, CR, BEL, CSI and a bidi override: every command shows them escaped."""
    before = stored(data_dir, embedder)
    query = SEARCHED
    through_a_pipe = piped_search
    monkeypatch.setenv("AGRAG_DATA_DIR", str(data_dir))
    runner = CliRunner()
    as_json = runner.invoke(app, ["search", query, "recipe=hybrid", "--json"])
    hostile = next(h for h in json.loads(as_json.stdout)["results"] if "checklist" in h["item"].get("text", ""))
    assert "\x1b[2J" in hostile["item"]["text"], "--json keeps the data exact (JSON escapes, the parser restores)"
    item = hostile["item"]
    chunk_id = str(EvidenceId(item["document_id"], item["document_version"], order=item["order"]))
    shown = {"search": (through_a_pipe.stdout + through_a_pipe.stderr, through_a_pipe.returncode)}
    # the snippet of the hostile passage is what is checked: keyword discovery finds it first for any ranking
    for args in (["evidence", "discover", query, "--mode", "keyword"], ["status"], ["evidence", "fetch", chunk_id]):
        result = runner.invoke(app, args)
        shown[" ".join(args[:2])] = (result.stdout + result.stderr, result.exit_code)
    for command, (text, code) in shown.items():
        assert code == 0, (command, text)
        assert not RAW_CONTROL.search(text), (command, text)
    assert "\\u001b[2J" in shown["search"][0], "the sequence is shown, not obeyed"
    assert "\\u202e" in shown["evidence fetch"][0] and "\\u001b]0;pwned" in shown["evidence discover"][0]
    # the file name in the ingest report's file table, and a log line
    table = SafeConsole(file=io.StringIO(), width=120)
    table.print(file_status_table((FileStatus(f"notes/{HOSTILE_NAME}", "failed", "bad \x07 byte \u202e"),)))
    rendered = table.file.getvalue()  # type: ignore[attr-defined]
    assert "launch\\u001b[31mnotes.md" in rendered and "\\u202e" in rendered and not RAW_CONTROL.search(rendered)
    install_log_escaping()
    record = io.StringIO()
    handler = logging.StreamHandler(record)
    logger = logging.getLogger("agrag.tests.defect_10")
    logger.addHandler(handler)
    try:
        logger.warning("Ingesting %s failed: %s", HOSTILE_NAME, "CR\rhere")
    finally:
        logger.removeHandler(handler)
    assert record.getvalue() == "Ingesting launch\\u001b[31mnotes.md failed: CR\\u000dhere\n"
    assert printable("line\nnext\ttab") == "line\nnext\ttab" and printable("a\nb", multiline=False) == "a\\u000ab"
    assert stored(data_dir, embedder) == before


# defect 11 (rest): bytes that are not UTF-8, huge span numbers, an unknown override


def test_defect_11_a_query_of_bytes_that_are_not_utf8_is_refused_with_a_message(
    data_dir: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    """In-process, CLI (argv bytes) and HTTP (a lone surrogate in JSON): a ``QueryTextError``, not a model crash."""
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        before = runtime.store.graph.counts()
        with pytest.raises(QueryTextError, match="not UTF-8"):
            runtime.engine.search_sync("Orion \udcff\udcfe", runtime.config.recipe)
        with pytest.raises(QueryTextError):
            runtime.evidence_session().discover("\udcffabc")
        access = AccessPolicy([ApiToken("admin", ADMIN)], OWNER)
        with (
            uvicorn_in_thread(create_app(runtime, access)) as url,
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60) as http,
        ):
            body = b'{"query": "Orion \\udcff planner"}'
            refused = http.post("/v1/search", content=body, headers={"Content-Type": "application/json"})
            session = http.post("/v1/sessions", json={}).json()["id"]
            discover = http.post(
                f"/v1/sessions/{session}/discover", content=body, headers={"Content-Type": "application/json"}
            )
            fine = http.post("/v1/search", json={"query": QUESTION})
        for answer in (refused, discover):  # the request model refuses it: a 422 naming the field, not a 500
            assert answer.status_code == 422 and answer.json()["error"] == "ValidationError", answer.text
            assert "query" in answer.json()["message"] and "unicode" in answer.json()["message"], answer.text
        assert fine.status_code == 200 and fine.json()["hits"]
    cli = subprocess.run(
        [AGRAG.encode(), b"search", b"Orion \xff\xfe planner"],
        capture_output=True,
        env=cli_env(data_dir),
        cwd=tmp_path,
        check=False,
    )
    stderr = cli.stderr.decode("utf-8", "replace")
    assert cli.returncode == 1 and "Traceback" not in stderr, stderr
    assert "'Orion \\xff\\xfe planner' holds bytes that are not UTF-8" in flat(stderr)
    assert stored(data_dir, embedder) == before


def test_defect_11_huge_or_unicode_span_numbers_are_evidence_errors(
    data_dir: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    """Span and chunk numbers beyond 64 bits, or in other scripts' digits: an ``EvidenceError``, never Kùzu's cast."""
    good = "d1f3a9c2b4e5d6f.3b9f0c1d2e4a"
    for text in (f"{good}.s1-99999999999999999999", f"{good}.c{'9' * 5000}", f"{good}.s{2**63}-{2**63 + 5}"):
        with pytest.raises(EvidenceError, match=r"larger than any position|more digits than any position"):
            EvidenceId.parse(text)
    for text in (f"{good}.c\u0661\u0662", f"{good}.s\uff11-\uff15"):  # Arabic-Indic and full-width digits
        with pytest.raises(EvidenceError, match="not an evidence id"):
            EvidenceId.parse(text)
    with pytest.raises(EvidenceError):
        EvidenceId.of_chunk_id(f"{good}.\u0661")
    assert str(EvidenceId.parse(f"{good}.s0-{2**63 - 1}")) == f"{good}.s0-{2**63 - 1}"
    with open_runtime([], settings_of(data_dir), embedder=embedder) as runtime:
        before = runtime.store.graph.counts()
        doc = runtime.store.graph.documents(limit=1)[0]
        with pytest.raises(EvidenceError, match=r"larger than any position|more digits"):
            runtime.evidence_session().fetch([f"{doc.id}.{doc.version[:12]}.s1-99999999999999999999"])
        huge = runtime.evidence_session().fetch([f"{doc.id}.{doc.version[:12]}.s1-{2**63 - 1}"])
        assert huge.items or huge.not_found, "the largest valid span is looked up, not crashed on"
        assert runtime.store.graph.counts() == before


def test_defect_11_an_unknown_override_lists_the_valid_keys() -> None:
    """A misspelled nested key names the level that exists and its keys; a map says how to add an entry."""
    with pytest.raises(ConfigError) as nested:
        load_config(["recipe.expand.depth=2"])
    assert "recipe has no key 'expand'" in str(nested.value) and "bfs_depth" in str(nested.value)
    with pytest.raises(ConfigError) as top:
        load_config(["retriever.limit=2"])
    assert "valid keys under the top level: embedder, evaluation, ingest, recipe" in str(top.value)
    with pytest.raises(ConfigError) as value:
        load_config(["recipe.limit.max=2"])
    assert "recipe.limit is a value" in str(value.value)
    with pytest.raises(ConfigError) as mapping:
        load_config(["ingest.ontology.relation_types.OWNS=[]"])
    assert "+ingest.ontology.relation_types.OWNS=" in str(mapping.value)


# every entry point: the same messages through `agrag serve`


@pytest.mark.slow
def test_defects_8_and_11_hold_through_agrag_serve(
    data_dir: Path, embedder: SentenceTransformersTextEmbedder, prefect_harness: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI as a client of `agrag serve`: the same typed messages for a bad recipe, argv bytes and a huge span."""
    from prefect.settings import PREFECT_API_URL

    before = stored(data_dir, embedder)
    (data_dir.parent / "conf" / "recipe").mkdir(parents=True)
    (data_dir.parent / "conf" / "recipe" / "broken.yaml").write_text(BAD_YAML)
    # No deployment: one of the default name on the session's Prefect server would take another test's place.
    env = serve_env(data_dir, PREFECT_API_URL=str(PREFECT_API_URL.value()))
    serve = Serve(data_dir, "--deployment", "", env=env)
    try:
        serve.started()
        monkeypatch.setenv("AGRAG_DATA_DIR", str(data_dir))  # the CLI finds the server's file there
        monkeypatch.chdir(data_dir.parent)
        runner = CliRunner()
        bad_recipe = runner.invoke(app, ["search", QUESTION, "recipe=broken"])
        huge = runner.invoke(app, ["evidence", "fetch", "d1f3a9c2b4e5d6f.3b9f0c1d2e4a.s1-99999999999999999999"])
        raw = runner.invoke(app, ["search", "Orion \udcff"])  # what Python makes of the argv bytes b"Orion \xff"
        discover = runner.invoke(app, ["evidence", "discover", "Orion \udcff"])
        fine = runner.invoke(app, ["search", QUESTION])
    finally:
        serve.stop(signal.SIGTERM)
    assert "POST /v1/search 200" in serve.stderr, "the good search went to the server"
    assert bad_recipe.exit_code == 2 and "broken.yaml, line 2" in flat(bad_recipe.stderr), bad_recipe.output
    assert huge.exit_code == 1 and "more digits than any position" in flat(huge.stderr), huge.output
    for refused in (raw, discover):
        assert refused.exit_code == 1 and "'Orion \\xff' holds bytes that are not UTF-8" in flat(refused.stderr)
    assert fine.exit_code == 0 and "Orion Planner" in fine.stdout
    assert not any(r.exception and not isinstance(r.exception, SystemExit) for r in (bad_recipe, huge, raw, fine))
    assert stored(data_dir, embedder) == before


# defect 12: output through a pipe


def test_defect_12_a_piped_table_is_not_squeezed_to_80_columns(piped_search: subprocess.CompletedProcess[str]) -> None:
    """Without a terminal (and without COLUMNS) tables take their natural width, not 80 columns."""
    piped_out = piped_search
    lines = piped_out.stdout.splitlines()
    assert max(len(line) for line in lines) > 80, "a pipe gets the full table, not one cut to 80 columns"
    first_row = next(line for line in lines if line.startswith("│")).split("│")
    assert not any("…" in cell for cell in first_row[1:5]), f"rank, method, score and type whole: {first_row}"
    assert "Orion Planner" in piped_out.stdout and "│ entity " in piped_out.stdout
    assert SafeConsole(file=io.StringIO()).width == PIPE_WIDTH
    assert SafeConsole(file=io.StringIO(), width=60).width == 60, "an explicit width (or COLUMNS) still rules"


@pytest.mark.slow
def test_defect_12_eval_through_a_pipe_prints_a_line_per_stage(tmp_path: Path, prefect_harness: None) -> None:
    """`agrag eval` into a pipe: a line as each store-build stage starts and ends and per recipe searched."""
    from prefect.settings import PREFECT_API_URL

    corpus = [
        {"title": "Orion", "text": "Maria Chen wrote the Orion Planner in 2021."},
        {"title": "Atlas", "text": "The Atlas Controller runs at the Lyon site."},
        {"title": "Vega", "text": "Vega Perception detects pallets for the Orion Planner."},
    ]
    questions = [
        {"question": "Who wrote the Orion Planner?", "gold": [0]},
        {"question": "Where is Atlas?", "gold": [1]},
    ]
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    env = cli_env(
        tmp_path / "data",
        AGRAG_EVAL_CACHE_DIR=str(tmp_path / "cache"),
        AGRAG_EVAL_RESULTS_DIR=str(tmp_path / "results"),
        PREFECT_API_URL=str(PREFECT_API_URL.value()),  # the session's server: this test is about the lines
    )
    args = ("eval", "--corpus", "corpus.json", "--questions", "questions.json", "evaluation.recipes=[hybrid]")
    result = piped(*args, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    for expected in ("load started", "load: 3 files read", "embed started", "embed: ", "searching with hybrid: 2"):
        assert any(expected in line for line in lines), (expected, result.stderr)
    assert all(re.match(r"\d\d:\d\d:\d\d ", line) for line in lines if "started" in line)
    assert "Store default: ingested" in result.stdout
