"""A tiny sentence-transformers cross-encoder, generated offline, that scores community reports lowest.

Tests of the cross-encoder re-ranker need a real model folder, and no model may be downloaded. This module builds
one in about five seconds: a 2-layer BERT (hidden size 32, 2 heads) with a word-level vocabulary of ``WORDS``,
trained on CPU with fixed seeds on synthetic (query, passage) pairs, to these scores (after the sigmoid that
``CrossEncoder.predict`` applies to a one-label model):

* a passage that starts with ``REPORT_MARKER`` ("Community report"): 0.05, whatever the query and the rest;
* any other passage: 0.6, plus up to 0.35 for the share of its words that are names (``NAMES``).

So every text that starts with the marker scores below every other text, and the other texts get scores spread
over (0.6, 0.95) rather than one constant, which is what a test of a re-order needs. The tests check both with
``CrossEncoder.predict``; they do not take the training on trust. Texts should use ``WORDS`` (other words become
``[UNK]``), and only report texts may contain the word "community".
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

REPORT_MARKER = "Community report"

NAMES = (
    "maria chen orion planner atlas controller slam maps ada lovelace charles babbage analytical engine "
    "vega robot lidar sensor kalman filter acme labs berlin paris rover arm gripper camera battery"
).split()
LABELS = "person component organization place concept".split()
COMMON = (
    "the a an of and in on to for with by is was wrote uses built designed owns runs leads tested "
    "who what where which how why does did study studied work worked team project notes overview design "
    "safety release version map route path speed power data model error test plan report summary "
    "main themes topic related about first second later new old"
).split()
PUNCTUATION = [">", ":", "(", ")", ",", "=", ".", "?", "-"]
WORDS: tuple[str, ...] = tuple(dict.fromkeys([*NAMES, *LABELS, *COMMON, "community", *PUNCTUATION]))
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

SEED = 1234
STEPS = 500
BATCH = 32
LEARNING_RATE = 1e-3
REPORT_TARGET = 0.05
_CONTENT = [*NAMES, *COMMON]
_NAME_SET = frozenset(NAMES)


def _example(rng: random.Random) -> tuple[str, str, float]:
    """One (query, passage, target score) pair, the passage shaped like an entity, a chunk or plain text."""
    query = " ".join(rng.choice(_CONTENT) for _ in range(rng.randint(1, 4))) + rng.choice(("", "?"))
    words = [rng.choice(_CONTENT) for _ in range(rng.randint(3, 12))]
    shape = rng.randrange(3)
    if shape == 0:
        passage = f"{words[0]} {words[1]} ({rng.choice(LABELS)}): {' '.join(words[2:])}"
    elif shape == 1:
        passage = f"{words[0]} > {words[1]}\n{' '.join(words[2:])}."
    else:
        passage = " ".join(words)
    if rng.random() < 0.35:
        return query, f"{REPORT_MARKER} {passage}", REPORT_TARGET
    return query, passage, 0.6 + 0.35 * sum(w in _NAME_SET for w in words) / len(words)


def make_tiny_cross_encoder(folder: Path) -> Path:
    """Write a tiny trained cross-encoder (model and tokenizer) into ``folder`` and return ``folder``.

    ``sentence_transformers.CrossEncoder(str(folder))`` loads it; its scores are sigmoids in (0, 1). Takes about
    five seconds on one CPU core, downloads nothing, and writes the seconds it took to ``generation_seconds.txt``.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: index for index, token in enumerate([*SPECIAL, *WORDS])}
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True, model_max_length=128)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=1,
    )
    torch.manual_seed(SEED)
    model = BertForSequenceClassification(config)
    rng = random.Random(SEED)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    threads = torch.get_num_threads()
    # Matrices this small train twice as fast on one thread, and the result then does not depend on the machine.
    torch.set_num_threads(1)
    try:
        model.train()
        for _ in range(STEPS):
            batch = [_example(rng) for _ in range(BATCH)]
            inputs = tokenizer([q for q, _, _ in batch], [p for _, p, _ in batch], padding=True, return_tensors="pt")
            # Regression on the logits: a soft-label BCE has weak gradients near its targets, learns only the marker.
            targets = torch.tensor([math.log(t / (1.0 - t)) for _, _, t in batch])
            loss = torch.nn.functional.mse_loss(model(**inputs).logits.squeeze(-1), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "generation_seconds.txt").write_text(f"{time.perf_counter() - started:.2f}\n", encoding="utf-8")
    return folder
