"""``PassageColumns.weights``: one entry per linked pair, an about link outweighing a mention of the same pair."""

import numpy as np

from agrag.components.data_models.passage_columns import ABOUT_WEIGHT, PassageColumns


def _positions(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_a_pair_counts_once_and_an_about_link_wins_over_a_mention() -> None:
    columns = PassageColumns(
        chunk_ids=["c0", "c1", "c2"],
        entity_ids=["e0", "e1"],
        # c0-e0 twice (a mention read twice), c1-e1 both mentioned and about, c2-e0 mentioned
        mention_chunks=_positions(0, 0, 1, 2),
        mention_entities=_positions(0, 0, 1, 0),
        about_chunks=_positions(1, 2),
        about_entities=_positions(1, 1),
    )
    weights = columns.weights().toarray()
    assert weights.tolist() == [[1.0, 0.0], [0.0, ABOUT_WEIGHT], [1.0, ABOUT_WEIGHT]]
    assert columns.weights().nnz == 4


def test_no_links_give_an_empty_matrix_of_the_right_shape() -> None:
    empty = _positions()
    columns = PassageColumns([], [], empty, empty, empty, empty)
    assert columns.weights().shape == (0, 0) and columns.weights().nnz == 0
