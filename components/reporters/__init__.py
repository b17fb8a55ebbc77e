"""Reporters: write what each community of the entity graph is about."""
