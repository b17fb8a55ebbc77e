"""`agrag ingest-text` in this process: from standard input or --file, then unchanged; a typed error, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agrag.service.cli import app

TEXT = "# Depot\n\nThe Osprey depot opens at six; Ilse Varga holds the keys.\n"


def test_ingest_text_from_stdin_then_file_unchanged(tmp_path: Path, prefect_harness: None) -> None:
    env = {"AGRAG_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    first = CliRunner().invoke(app, ["ingest-text", "depot"], input=TEXT, env=env)
    assert first.exit_code == 0, first.output
    assert "depot: ingested. Document d" in first.stdout and "title 'Depot'" in first.stdout
    source = tmp_path / "depot.md"
    source.write_text(TEXT, encoding="utf-8")
    again = CliRunner().invoke(app, ["ingest-text", "depot", "--file", str(source), "--json"], env=env)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["status"] == "unchanged"
    bad = CliRunner().invoke(app, ["ingest-text", "../depot"], input=TEXT, env=env)
    assert bad.exit_code == 1 and "cannot name a text" in bad.output and "Traceback" not in bad.output
