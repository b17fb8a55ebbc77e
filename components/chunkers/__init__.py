"""Chunkers: cut document versions into passages that know their span and heading path."""
