"""Loaders: read source files into document versions."""
