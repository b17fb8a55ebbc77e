"""`agrag finalize` and `agrag reextract` through a real `agrag serve`: queued, followed, printed as in-process.

Two copies of the ingested example corpus get the same commands: one in-process, one held by an `agrag serve`
subprocess (the CLI then is its client). The lines each command prints are the same, stage timings aside.
"""

import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import Result
from prefect.settings import PREFECT_API_URL

from agrag.components.data_models.document import document_id_for
from tests.service.client.test_cli_client import agrag
from tests.service.conftest import copy_corpus
from tests.service.server.test_serve_command import Serve, serve_env

pytestmark = pytest.mark.slow

TEAM = document_id_for("team.md", "acme_notes")
NOTE = "# Kestrel Pump\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021 for Harbour Works.\n"
NOTHING_STALE = "nothing to finalize: the communities and reports are up to date"
# what the CLI adds when it follows a run on a server: the acceptance, and a line per stage as it ends (with its time)
FOLLOWING = re.compile(r"Accepted by the agrag server at http://\S+ as run \w+\.|[a-z-]+: .+ \(\d+\.\d+ s\)")


STEPS: dict[str, tuple[str, ...]] = {  # in order, after an ingestion with ingest.finalize=manual
    "finalize": ("finalize",),
    "reextract": ("reextract", TEAM, "--force"),
    "finalize_again": ("finalize",),
    "reextract_unknown": ("reextract", "dnothing"),
}


@dataclass
class Outputs:
    """What each command printed in-process and through the server, and the served data dir."""

    in_process: dict[str, Result]
    through_server: dict[str, Result]
    served_dir: Path


@pytest.fixture(scope="module")
def outputs(
    ingested_corpus: Path, tmp_path_factory: pytest.TempPathFactory, prefect_harness: None
) -> Iterator[Outputs]:
    root = tmp_path_factory.mktemp("cli-runs")
    folder = root / "pump"
    folder.mkdir()
    (folder / "kestrel.md").write_text(NOTE, encoding="utf-8")
    local, remote = copy_corpus(ingested_corpus, root / "local"), copy_corpus(ingested_corpus, root / "remote")
    for data_dir in (local, remote):  # both leave the communities stale, in-process
        ingested = agrag(data_dir, "ingest", str(folder), "ingest.finalize=manual")
        assert ingested.exit_code == 0 and "deferred" in ingested.output, ingested.output
    in_process = {name: agrag(local, *args) for name, args in STEPS.items()}
    server = Serve(remote, "--deployment", "", env=serve_env(remote, PREFECT_API_URL=str(PREFECT_API_URL.value())))
    try:
        server.started()
        through_server = {name: agrag(remote, *args) for name, args in STEPS.items()}
        yield Outputs(in_process, through_server, remote)
    finally:
        code = server.stop(signal.SIGTERM)
        assert code == 0, server.stderr


def printed(result: Result) -> list[str]:
    """The command's own lines on stdout: what following a run adds is left out."""
    return [line for line in result.stdout.splitlines() if not FOLLOWING.fullmatch(line)]


def test_finalize_prints_the_same_lines_through_the_server(outputs: Outputs) -> None:
    for name in ("finalize", "finalize_again"):
        for result in (outputs.in_process[name], outputs.through_server[name]):
            assert result.exit_code == 0, f"{name}: {result.output}"
    local, served = outputs.in_process["finalize"], outputs.through_server["finalize"]
    assert printed(served) == printed(local)
    assert printed(local)[0].startswith("finalized: communities rebuilt around ")
    assert re.fullmatch(r"reports: \d+ extractive \(\d+ reused\)", printed(local)[1]), printed(local)
    accepted, *stages = served.stdout.splitlines()[: -len(printed(served))]
    assert accepted.startswith("Accepted by the agrag server at http://127.0.0.1:")
    assert [line.split(":")[0] for line in stages] == ["communities", "reports"]
    assert (
        printed(outputs.through_server["finalize_again"])
        == printed(outputs.in_process["finalize_again"])
        == [NOTHING_STALE]
    )


def test_reextract_prints_the_same_lines_through_the_server(outputs: Outputs) -> None:
    local, served = outputs.in_process["reextract"], outputs.through_server["reextract"]
    assert local.exit_code == served.exit_code == 0, served.output
    assert printed(served) == printed(local)
    assert printed(local)[0].startswith(f"{TEAM}: reextracted: ")
    assert printed(local)[-1] == "Re-extraction: 1 reextracted, 0 unchanged, 0 failed."
    local, served = outputs.in_process["reextract_unknown"], outputs.through_server["reextract_unknown"]
    assert local.exit_code == served.exit_code == 1
    assert served.output == local.output and "No stored document has the id 'dnothing'" in local.output


def test_the_runs_are_listed_and_shown_by_what_they_did(outputs: Outputs) -> None:
    listed = agrag(outputs.served_dir, "runs", "list")
    assert listed.exit_code == 0, listed.output
    assert "finalize of communities and reports  [cli]  completed" in listed.output
    assert f"re-extraction of {TEAM}  [cli]  completed" in listed.output
    accepted = re.search(r"as run (\w+)\.", outputs.through_server["finalize"].stdout)
    assert accepted is not None
    shown = agrag(outputs.served_dir, "runs", "show", accepted.group(1))
    assert shown.exit_code == 0, shown.output
    assert f"Run {accepted.group(1)}: finalize of communities and reports, from cli; completed" in shown.output
    assert printed(outputs.in_process["finalize"])[1] in shown.output  # the reports line of its report
