"""Retrievers: the search methods a recipe runs (entity, chunk)."""
