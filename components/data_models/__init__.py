"""Frozen data types that cross module boundaries: documents, chunks, entities, relations, results."""
