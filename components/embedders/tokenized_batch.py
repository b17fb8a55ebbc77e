"""The model inputs of a batch of texts, as the ONNX and plain-torch encoders both feed a BERT-style model.

Tokenization uses the model's own ``tokenizer.json``, truncated at the model's ``max_seq_length`` and not padded by
the tokenizer; each batch is padded here to its longest text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def truncating_tokenizer(tokenizer_file: Path, max_length: int) -> Any:
    """A ``tokenizers.Tokenizer`` from ``tokenizer_file`` that cuts texts at ``max_length`` tokens and never pads."""
    from tokenizers import Tokenizer  # noqa: PLC0415 - loaded only by the encoders that tokenize themselves

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    return tokenizer


def padded_inputs(tokenizer: Any, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """``INPUTS`` of ``texts`` as int64 arrays, one row each, zero-padded to the longest text of the batch."""
    encodings = tokenizer.encode_batch(list(texts))
    width = max(len(e.ids) for e in encodings)
    feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUTS}
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        feeds["input_ids"][row, :n] = encoding.ids
        feeds["attention_mask"][row, :n] = encoding.attention_mask
        feeds["token_type_ids"][row, :n] = encoding.type_ids
    return feeds
