"""``agrag eval``: retrieval quality of recipes against BM25 and dense baselines on multi-hop QA sets."""
