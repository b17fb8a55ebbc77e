"""A data dir built with the torch embedder answers the same searches with embedder=minilm_onnx."""

from __future__ import annotations

from pathlib import Path

import pytest

from agrag.pipelines.runtime import open_runtime
from tests.service.conftest import copy_corpus
from tests.support.isolated_settings import isolated_settings

QUESTIONS = ("Who wrote the Orion Planner?", "What caused the replanning storm in Lyon?", "lidar window aisle 14")


def _results(data_dir: Path, overrides: list[str], onnx_dir: Path) -> dict[tuple[str, str], list[str]]:
    settings = isolated_settings(data_dir)
    settings = type(settings)(settings.agrag.model_copy(update={"onnx_dir": onnx_dir}), settings.retrieval)
    found = {}
    with open_runtime(overrides, settings) as runtime:
        assert runtime.embedder.backend == ("onnx" if overrides else "torch")
        for question in QUESTIONS:
            for recipe in ("chunk", "hybrid", "graph_expand"):
                response = runtime.engine.search_sync(question, runtime.config_for([f"recipe={recipe}"]).recipe)
                found[(recipe, question)] = [r.item.id for r in response.results]
    return found


def test_a_torch_built_data_dir_answers_the_same_with_onnx(
    ingested_corpus: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data_dir = copy_corpus(ingested_corpus, tmp_path)
    onnx_dir = tmp_path_factory.mktemp("onnx-export")
    torch = _results(data_dir, [], onnx_dir)
    onnx = _results(data_dir, ["embedder=minilm_onnx"], onnx_dir)
    assert all(torch.values())
    assert onnx == torch
