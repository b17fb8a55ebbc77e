"""The agrag CLI as a client of `agrag serve`: the same output as in-process, ingestion queued and followed.

One real `agrag serve` subprocess serves a copy of the example corpus for the module. Before it starts, the same
commands run in-process on that data dir; once it serves, they run again (now as its clients) and must print the
same bytes, trace timings aside.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import Result
from prefect.settings import PREFECT_API_URL
from typer.testing import CliRunner

from agrag.components.data_models.document import document_id_for
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.service.cli import app
from agrag.service.server.server_file import find_server, write_server_file
from tests.conftest import EXAMPLES
from tests.service.conftest import copy_corpus
from tests.service.server.test_serve_command import Serve, serve_env
from tests.support.synthetic_corpus import write_corpus

AGRAG = str(Path(sys.executable).with_name("agrag"))
QUESTION = "Who wrote the Orion Planner?"
COLUMNS = "200"


def agrag(data_dir: Path, *args: str, stdin: str | None = None, **env: str | None) -> Result:
    """Run the CLI in this process on ``data_dir`` (a client when a server holds it, in-process otherwise)."""
    base: dict[str, str | None] = {
        "AGRAG_DATA_DIR": str(data_dir),
        "COLUMNS": COLUMNS,
        "AGRAG_API_TOKEN": None,
        "AGRAG_FILES_ROOT": None,
    }
    return CliRunner().invoke(app, list(args), input=stdin, env={**base, **env})


COMMANDS: dict[str, tuple[str, ...]] = {
    "search": ("search", QUESTION),
    "search_json_trace": ("search", QUESTION, "recipe.limit=5", "--json", "--trace"),
    "search_graph": ("search", QUESTION, "recipe=graph_expand", "--trace"),
    "discover": ("evidence", "discover", QUESTION),
    "discover_json": ("evidence", "discover", "Orion Planner interfaces", "--json", "--limit", "5"),
    "find_entities": ("evidence", "find-entities", "Maria Chen", "--json"),
    "merges": ("merges", "list"),
    "status": ("status",),
    "status_json": ("status", "--json"),
    "unknown_recipe": ("search", QUESTION, "recipe=nope"),
    "ingest_without_llm": ("ingest", str(EXAMPLES), "ingest/extractor=llm"),
}


def run_all(data_dir: Path) -> dict[str, Result]:
    return {name: agrag(data_dir, *args) for name, args in COMMANDS.items()}


@dataclass
class Served:
    """The running server, and what each command printed before it started (in-process) and through it."""

    data_dir: Path
    url: str
    in_process: dict[str, Result]
    through_server: dict[str, Result]

    def client(self) -> httpx.Client:
        info = find_server(self.data_dir)
        assert info is not None
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {info.token}"}, timeout=60)


@pytest.fixture(scope="module")
def served(ingested_corpus: Path, tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Iterator[Served]:
    data_dir = copy_corpus(ingested_corpus, tmp_path_factory.mktemp("client"))
    in_process = run_all(data_dir)
    # the session's Prefect server runs the served flows; no deployment is served
    env = serve_env(data_dir, PREFECT_API_URL=str(PREFECT_API_URL.value()))
    server = Serve(data_dir, "--deployment", "", env=env)
    try:
        url = server.started()
        yield Served(data_dir, url, in_process, run_all(data_dir))
    finally:
        code = server.stop(signal.SIGTERM)
        assert code == 0, server.stderr


def without_timings(text: str) -> str:
    """A search's JSON output with the trace's timings left out."""
    data = json.loads(text)
    for status in (*data["trace"]["methods"], *data["trace"]["steps"]):
        status.pop("elapsed_ms")
    data["trace"].pop("elapsed_ms")
    data["trace"]["analysis"].pop("elapsed_ms")
    return json.dumps(data, indent=1)


def rows(text: str) -> list[str]:
    """Tables as rows of cells, one per line: column widths, rules and times (numbers with a point) left out."""
    text = re.sub(r"returned,\s+\d+\s+ms", "returned", text)  # a trace's title, wrapped where its width says
    found = []
    for line in text.splitlines():
        if not line.strip() or set(line.strip()) <= set("┏┓┗┛┡┩└┘━─┳┻╇┴┬┃│ "):
            continue
        cells = [c.strip() for c in re.split("[│┃]", line)]
        found.append(" | ".join("#" if re.fullmatch(r"\d+\.\d+", c) else c for c in cells))
    return found


def test_search_and_evidence_print_what_they_print_in_process(served: Served) -> None:
    before, after = served.in_process, served.through_server
    for name in ("search", "discover", "discover_json", "find_entities", "merges"):
        assert before[name].exit_code == 0, before[name].output
        assert after[name].exit_code == 0, after[name].output
        assert after[name].output == before[name].output, name
    assert after["search_json_trace"].exit_code == 0, after["search_json_trace"].output
    assert without_timings(after["search_json_trace"].output) == without_timings(before["search_json_trace"].output)
    assert json.loads(after["search_json_trace"].output)["trace"]["recipe"] == "bridge"  # the default
    assert after["search_graph"].exit_code == 0, after["search_graph"].output
    graph_before, graph_after = rows(before["search_graph"].output), rows(after["search_graph"].output)
    assert graph_after == graph_before
    assert "with recipe graph_expand" in after["search_graph"].output and "bfs" in after["search_graph"].output
    analysis = "query analysis: answer Person; names: Orion Planner; relations: wrote (rules)"
    assert analysis in after["search_graph"].output.splitlines()
    assert "Maria Chen wrote the Orion Planner" in after["discover"].output


def test_errors_read_and_exit_as_in_process(served: Served) -> None:
    before, after = served.in_process["unknown_recipe"], served.through_server["unknown_recipe"]
    assert before.exit_code == after.exit_code == 2
    assert after.output == before.output and "There is no recipe named 'nope'" in after.output
    store = agrag(served.data_dir, "evidence", "discover", "x", "vector_store=qdrant")
    assert store.exit_code == 2 and "change vector_store" in store.output and "stop the process" in store.output
    bad_id = agrag(served.data_dir, "evidence", "fetch", "not-an-id")
    assert bad_id.exit_code == 1 and "'not-an-id' is not an evidence id" in bad_id.output
    before, after = served.in_process["ingest_without_llm"], served.through_server["ingest_without_llm"]
    assert before.exit_code == after.exit_code == 2, after.output
    assert after.output == before.output and "AGRAG_LLM_BASE_URL" in after.output
    wrong = agrag(served.data_dir, "search", QUESTION, AGRAG_API_TOKEN="wrong-token-0123456789abcdef")
    assert wrong.exit_code == 1
    assert wrong.output == "Error: The token is not one this server accepts; check AGRAG_API_TOKEN or ask for one.\n"


def test_status_in_process_and_through_the_server(served: Served) -> None:
    before, after = served.in_process, served.through_server
    assert before["status"].exit_code == after["status"].exit_code == 0, after["status"].output
    first, *rest = after["status"].output.splitlines(keepends=True)
    info = find_server(served.data_dir)
    assert info is not None
    assert first == f"Served by the agrag server at {served.url} (process {info.pid}, since {info.started}).\n"
    assert "".join(rest) == before["status"].output
    assert "the data dir holds" in before["status"].output and "entities per label" in before["status"].output
    local, remote = json.loads(before["status_json"].output), json.loads(after["status_json"].output)
    assert local.pop("server") is None
    assert remote.pop("server") == {"url": served.url, "pid": info.pid, "started": info.started}
    assert remote == local and local["documents"] == 9 and local["generation"]


def test_an_evidence_session_file_works_through_the_server(served: Served, tmp_path: Path) -> None:
    session = str(tmp_path / "session.json")
    found = agrag(served.data_dir, "evidence", "discover", QUESTION, "--json", "--limit", "3", "--session", session)
    assert found.exit_code == 0, found.output
    author = next(h for h in json.loads(found.output)["hits"] if "Maria Chen wrote" in h["snippet"])
    fetched = agrag(served.data_dir, "evidence", "fetch", author["id"], "--session", session)
    assert fetched.exit_code == 0 and "Maria Chen wrote the Orion Planner" in fetched.output
    saved = json.loads(Path(session).read_text(encoding="utf-8"))
    assert saved["scope"] is None and [item["id"] for item in saved["fetched"]] == [author["id"]]
    draft = f"Maria Chen wrote the Orion Planner in 2023 [{author['id']}]."
    # a new server session per command: the file's fetched ids are restored into it
    checked = agrag(served.data_dir, "evidence", "check", "-", "--session", session, "--json", stdin=draft)
    assert checked.exit_code == 0 and json.loads(checked.output)["grounded"] is True, checked.output
    unread = agrag(served.data_dir, "evidence", "check", "-", stdin=draft)
    assert unread.exit_code == 0 and "not grounded" in unread.output and "not_fetched" in unread.output
    rendered = agrag(served.data_dir, "evidence", "render", "-", "--session", session, stdin=draft)
    assert rendered.exit_code == 0 and "[1]" in rendered.output and "Orion Planner Design Notes" in rendered.output


def test_the_document_scope_holds_through_the_server(served: Served, tmp_path: Path) -> None:
    session, team = str(tmp_path / "team.json"), document_id_for("team.md", "acme_notes")
    scoped = agrag(served.data_dir, "evidence", "discover", "Orion Planner", "--document", team, "--session", session)
    assert scoped.exit_code == 0, scoped.output
    again = agrag(served.data_dir, "evidence", "discover", "Orion Planner", "--session", session, "--json")
    assert {hit["id"].split(".")[0] for hit in json.loads(again.output)["hits"]} == {team}, "the file keeps the scope"
    other = agrag(
        served.data_dir,
        "evidence",
        "discover",
        "x",
        "--document",
        document_id_for("vendors.html", "acme_notes"),
        "--session",
        session,
    )
    assert other.exit_code == 1 and "scope is fixed when it starts" in other.output


def test_defect_1_text2cypher_with_a_document_is_refused_through_the_server(served: Served) -> None:
    """Issue 15, defect 1, through `agrag serve`: text2cypher under --document is refused, multi_hop keeps to it."""
    team = document_id_for("team.md", "acme_notes")
    refused = agrag(served.data_dir, "search", "anything", "recipe=text2cypher", "--document", team)
    flat = " ".join(refused.output.split())
    assert refused.exit_code != 0 and "FilterNotHonouredError" in flat and "document_ids" in flat, refused.output
    walked = agrag(served.data_dir, "search", QUESTION, "recipe=multi_hop", "--document", team, "--json")
    assert walked.exit_code == 0, walked.output
    found = json.loads(walked.output)["results"]
    assert found and {r["item"]["document_id"] for r in found} == {team}


def report_rows(output: str) -> list[str]:
    """The ingest report from its first line on, as rows (see ``rows``)."""
    return rows(output[output.index("Ingested ") :])


def test_ingest_is_queued_followed_and_reported_as_in_process(
    served: Served, ingested_corpus: Path, tmp_path: Path
) -> None:
    many, one, other = tmp_path / "many", tmp_path / "one", tmp_path / "other"
    write_corpus(many, count=30, seed=14)
    write_corpus(one, count=1, seed=15)
    (one / "note_000.md").rename(one / "pump.md")
    other.mkdir()
    (other / "ferry.md").write_text("# Ferry\n\nThe Osprey ferry line is run by Tomasz Wren.\n", encoding="utf-8")
    env = {**serve_env(served.data_dir), "COLUMNS": COLUMNS}
    first = subprocess.Popen(
        [AGRAG, "ingest", str(many), "--files"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert first.stdout is not None
        accepted = first.stdout.readline()
        match = re.fullmatch(rf"Accepted by the agrag server at {re.escape(served.url)} as run (\w+)\.\n", accepted)
        assert match, accepted
        first_id = match.group(1)
        with served.client() as client:  # one more run, behind it, that is cancelled before it starts
            doomed = client.post("/v1/ingestions", json={"folder": str(other)}).json()
        cancelled = agrag(served.data_dir, "runs", "cancel", doomed["id"])
        second = agrag(served.data_dir, "ingest", str(one))
        rest, errors = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, errors
    assert cancelled.exit_code == 0 and f"Run {doomed['id']} (ingest of {other}): cancelled." in cancelled.output
    assert second.exit_code == 0, second.output
    lines = second.output.splitlines()
    assert lines[0].startswith("Accepted by the agrag server at ")
    assert lines[1] == f"Queued behind run {first_id} (ingesting {many}); it starts when that run has finished."
    assert "Ingested " in second.output and "1 new or changed" in second.output
    # in a pipe: one line per stage as it ends, then the report
    stage_lines = rest[: rest.index("Ingested ")].splitlines()
    assert [line.split(":")[0] for line in stage_lines][:3] == ["load", "select-changed", "chunk"]
    assert stage_lines[0].startswith("load: 30 files read, 0 failed (") and stage_lines[0].endswith(" s)")
    assert all(re.fullmatch(r"[a-z-]+: .+", line) for line in stage_lines), stage_lines
    assert "\x1b[" not in rest  # no terminal codes in a pipe

    # the same folder ingested in-process into the same corpus prints the same report
    alone = copy_corpus(ingested_corpus, tmp_path / "alone")
    local = agrag(alone, "ingest", str(many), "--files")
    assert local.exit_code == 0, local.output
    assert report_rows(rest) == report_rows(local.output)

    listed = agrag(served.data_dir, "runs", "list", "--json")
    runs = {run["id"]: run for run in json.loads(listed.output)}
    assert runs[first_id]["state"] == "completed" and runs[doomed["id"]]["state"] == "cancelled"
    shown = agrag(served.data_dir, "runs", "show", first_id)
    assert shown.exit_code == 0 and f"Run {first_id}: ingest of {many}" in shown.output and "stages" in shown.output
    found = agrag(served.data_dir, "search", "Osprey ferry", "recipe=chunk", "--json")
    assert str(other) not in found.output and "Tomasz Wren" not in found.output  # the cancelled run wrote nothing


def test_delete_is_sent_to_the_server_and_followed(served: Served) -> None:
    document = document_id_for("vendors.html", "acme_notes")
    deleted = agrag(served.data_dir, "delete", document)
    assert deleted.exit_code == 0, deleted.output
    assert re.search(rf"^Deleted {document}: \d+ chunks retired \(still readable by id\)", deleted.output, re.M)
    unknown = agrag(served.data_dir, "delete", "dnothing")
    assert unknown.exit_code == 1 and "No document has the id 'dnothing'" in unknown.output


def test_chosen_files_are_sent_to_the_server_and_read_as_in_process(
    served: Served, ingested_corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "chosen"
    folder.mkdir()
    (folder / "ferry.md").write_text("# Ferry\n\nThe Heron ferry line is run by Ada Moss.\n", encoding="utf-8")
    (folder / "depot.md").write_text("# Depot\n\nThe Kite depot keeps spare rotors.\n", encoding="utf-8")
    (folder / "skip.txt").write_text("Not chosen, so never read.\n", encoding="utf-8")
    through = agrag(served.data_dir, "ingest", str(folder), "--only", "*.md", "--files")
    local = agrag(copy_corpus(ingested_corpus, tmp_path / "alone"), "ingest", str(folder), "--only", "*.md", "--files")
    assert through.exit_code == 0 and local.exit_code == 0, through.output + local.output
    # the server's data dir holds more documents than the copy (its communities differ): compare what was read
    read = [
        row for row in report_rows(through.output) if row.startswith((" | load ", " | select-changed ", " | chunk "))
    ]
    assert read and read == [
        row for row in report_rows(local.output) if row.startswith((" | load ", " | select-changed ", " | chunk "))
    ]
    files = [row for row in report_rows(through.output) if ".md" in row or ".txt" in row]
    assert files == [row for row in report_rows(local.output) if ".md" in row or ".txt" in row]
    assert "ferry.md" in through.output and "depot.md" in through.output and "skip.txt" not in through.output
    refused = agrag(served.data_dir, "ingest", str(folder), "--only", "*.pdf")
    assert refused.exit_code == 1 and "NoFilesMatched" not in refused.output and "*.pdf" in refused.output


def test_runs_commands_need_a_server(tmp_path: Path) -> None:
    result = agrag(tmp_path / "data", "runs", "list")
    assert result.exit_code == 1 and "No agrag server holds the data dir" in result.output


def test_a_server_that_does_not_answer_is_named_with_the_way_out(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    with DataDirLock(data_dir):  # this process holds the data dir, and its server file names a closed port
        write_server_file(data_dir, "http://127.0.0.1:9", "token-0123456789abcdef")
        result = agrag(data_dir, "search", QUESTION)
    assert result.exit_code == 1
    assert "The agrag server at http://127.0.0.1:9" in result.output and "the connection was refused" in result.output
    assert f"kill {os.getpid()}" in result.output


@pytest.mark.slow
def test_a_killed_server_leaves_a_file_the_cli_ignores(served: Served, ingested_corpus: Path, tmp_path: Path) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    server = subprocess.Popen(
        [AGRAG, "serve", "--port", "0", "--deployment", ""],
        env=serve_env(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while find_server(data_dir) is None:
            assert server.poll() is None and time.monotonic() < deadline, "agrag serve did not write its server file"
            time.sleep(0.1)
    finally:
        server.kill()  # kill -9: the server file stays behind
        server.wait()
    assert (data_dir / ".agrag.server.json").exists() and find_server(data_dir) is None
    result = agrag(data_dir, "search", QUESTION)
    assert result.exit_code == 0, result.output
    assert result.output == served.in_process["search"].output
