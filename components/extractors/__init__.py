"""Extractors: entities and relations from chunks."""
