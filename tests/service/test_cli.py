import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.data_models.document import document_id_for
from agrag.service.cli import app

AGRAG = str(Path(sys.executable).with_name("agrag"))


def run_agrag(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGRAG, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False)


@pytest.mark.slow
def test_ingest_and_search_end_to_end(tmp_path: Path, examples: Path) -> None:
    env = {
        **os.environ,
        "AGRAG_DATA_DIR": str(tmp_path / "data"),
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "COLUMNS": "200",
    }
    env.pop("PREFECT_API_URL", None)  # the CLI runs Prefect on its own, as a user's shell would

    started = time.perf_counter()
    first = run_agrag("ingest", str(examples), env=env, cwd=tmp_path)
    first_seconds = time.perf_counter() - started
    assert first.returncode == 0, first.stderr
    assert "9 files read, 9 new or changed" in first.stdout
    assert "pruned: nothing" in first.stdout
    for stage in ("chunk", "extract", "prune", "resolve", "communities", "reports"):
        assert f"│ {stage} " in first.stdout, stage
    started = time.perf_counter()
    second = run_agrag("ingest", str(examples), "--files", env=env, cwd=tmp_path)
    assert time.perf_counter() - started < first_seconds, "nothing changed, so the second run does less"
    assert second.returncode == 0, second.stderr
    assert "0 new or changed, 9 unchanged" in second.stdout
    assert "│ sites.csv " in second.stdout and second.stdout.count("unchanged") >= 9
    store_counts = second.stdout.split("store now holds")[1].split("\nfiles")[0]
    assert first.stdout.split("store now holds")[1].rstrip() == store_counts.rstrip()

    default = run_agrag("search", "Who wrote the Orion Planner?", "recipe.limit=3", "--json", env=env, cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    found = json.loads(default.stdout)["results"]
    assert found[0]["type"] == "Chunk" and "Maria Chen wrote the Orion Planner" in found[0]["item"]["text"]
    assert all(r["method"] == "ppr" for r in found), "the default recipe is bridge: the walk and its bridge round"
    three = run_agrag(
        "search",
        "Who wrote the Orion Planner?",
        "recipe=hybrid",
        "recipe.limit=3",
        "--trace",
        "--json",
        env=env,
        cwd=tmp_path,
    )
    assert three.returncode == 0, three.stderr
    payload = json.loads(three.stdout)
    results = payload["results"]
    assert len(results) == 3
    assert any(r["type"] == "Entity" and r["item"]["name"] == "Orion Planner" for r in results)
    assert any(r["type"] == "Chunk" and "Maria Chen wrote the Orion Planner" in r["item"]["text"] for r in results)
    assert [m["method"] for m in payload["trace"]["methods"]] == ["entity", "chunk"]
    analysis = payload["trace"]["analysis"]
    assert (analysis["answer_type"], analysis["entity_hints"], analysis["relation_keywords"]) == (
        "Person", ["Orion Planner"], ["wrote"],
    )  # fmt: skip

    log = run_agrag("merges", "list", env=env, cwd=tmp_path)
    assert log.returncode == 0, log.stderr
    assert "Controller Area Network" in log.stdout and "acronym" in log.stdout
    log_id = next(word for word in log.stdout.split() if word.endswith("-00000"))
    undone = run_agrag("merges", "undo", log_id, env=env, cwd=tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert "merged (undone)" in undone.stdout
    # the mistakes below are the CLI's own messages: in this process, which saves two interpreter starts
    again = CliRunner().invoke(app, ["merges", "undo", log_id], env=env)
    assert again.exit_code == 1 and "No active merge" in again.output

    vendors = document_id_for("vendors.html", "acme_notes")
    deleted = run_agrag("delete", vendors, env=env, cwd=tmp_path)
    assert deleted.returncode == 0, deleted.stderr
    assert f"Deleted {vendors}" in deleted.stdout and "entities no other document supports removed" in deleted.stdout
    unknown = CliRunner().invoke(app, ["delete", "dnope"], env=env)
    assert unknown.exit_code == 1 and "No document has the id 'dnope'" in unknown.output


def test_search_before_ingest_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "empty"))
    result = CliRunner().invoke(app, ["search", "anything"])
    assert result.exit_code == 1
    assert "agrag ingest" in result.output
    assert not (tmp_path / "empty").exists()


def test_unknown_recipe_exits_non_zero_naming_the_choices() -> None:
    result = CliRunner().invoke(app, ["search", "anything", "recipe=nonexistent"])
    assert result.exit_code == 2
    assert "no recipe named 'nonexistent'" in result.output
    valid = "bridge, chunk, entity, fact, graph_expand, hybrid, hybrid_reranked, multi_hop, text2cypher, thematic"
    assert f"Valid choices: {valid}" in " ".join(result.output.split())


def test_recipe_with_unknown_method_exits_non_zero_naming_the_methods(tmp_path: Path) -> None:
    (tmp_path / "conf" / "recipe").mkdir(parents=True)
    (tmp_path / "conf" / "recipe" / "broken.yaml").write_text("methods: [entity, pagerank]\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["search", "anything", "recipe=broken"])
    assert result.exit_code == 2
    assert "Unknown retrieval method 'pagerank'" in result.output
    assert "Valid methods: chunk, community, entity, fact, ppr, text2cypher" in result.output


@pytest.mark.needs_prefect
def test_ingest_with_a_typo_fails_before_starting_prefect(tmp_path: Path, examples: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(examples), "ingest.chunker.max_char=5"])
    assert result.exit_code == 2
    assert "ingest.chunker.max_char is not a setting" in result.output


def test_show_config_prints_the_validated_composition() -> None:
    result = CliRunner().invoke(app, ["show-config", "recipe.limit=4"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["recipe"]["limit"] == 4


def test_prefect_home_is_created_with_its_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agrag.service.runtime_env import ensure_prefect_home

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "a" / "b" / "prefect"))
    ensure_prefect_home()
    assert (tmp_path / "a" / "b" / "prefect").is_dir()


def test_ingest_of_a_missing_folder_fails_before_starting_prefect(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "is not a folder" in result.output
    assert "Prefect is starting" not in result.output


@pytest.mark.needs_prefect
def test_an_llm_extractor_without_an_endpoint_fails_before_starting_prefect(examples: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(examples), "ingest/extractor=llm"])
    assert result.exit_code == 2
    assert "AGRAG_LLM_BASE_URL" in result.output and "Prefect is starting" not in result.output


def test_a_folder_outside_the_files_root_is_refused(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    monkeypatch.setenv("AGRAG_FILES_ROOT", str(root))
    for folder in (str(examples), "../", "docs/../../"):
        result = CliRunner().invoke(app, ["ingest", folder])
        assert result.exit_code == 1, folder
        assert "AGRAG_FILES_ROOT" in result.output and "Prefect is starting" not in result.output


@pytest.mark.needs_prefect
def test_delete_before_any_ingest_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "empty"))
    result = CliRunner().invoke(app, ["delete", "d0123456789abcde"])
    assert result.exit_code == 1
    assert "Nothing has been ingested" in result.output


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_ingest_only_chosen_files_of_a_folder(tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("COLUMNS", "200")
    chosen = CliRunner().invoke(app, ["ingest", str(examples), "--only", "*.md", "--only", "sites.csv", "--files"])
    assert chosen.exit_code == 0, chosen.output
    listed = {line.split("│")[1].strip() for line in chosen.output.splitlines() if line.startswith("│ ")}
    markdown = {p.name for p in examples.glob("*.md")}
    assert markdown | {"sites.csv"} <= listed and "runbook.rst" not in listed
    assert f"{len(markdown) + 1} files read" in chosen.output
    whole = CliRunner().invoke(app, ["ingest", str(examples)])
    assert whole.exit_code == 0, whole.output
    assert f"{9 - len(markdown) - 1} new or changed, {len(markdown) + 1} unchanged" in whole.output, "the same ids"
    monkeypatch.setenv("AGRAG_MAX_FILES_PER_CALL", "2")
    too_many = CliRunner().invoke(app, ["ingest", str(examples), "--only", "*.md"])
    outside = CliRunner().invoke(app, ["ingest", str(examples), "--only", "../*.md"])
    assert too_many.exit_code == 1 and "AGRAG_MAX_FILES_PER_CALL" in too_many.output, too_many.output
    assert outside.exit_code == 1 and "'..'" in outside.output and "Traceback" not in outside.output
