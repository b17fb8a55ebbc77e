"""Prefect flows and tasks, thin over components."""
