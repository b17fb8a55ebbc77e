"""Cutters: the last step of a recipe, keeping the top results."""
