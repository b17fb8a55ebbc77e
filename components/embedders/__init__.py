"""Embedders: dense vectors for passages, entities and queries."""
