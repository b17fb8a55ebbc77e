"""Re-rankers: the optional step that sets a new order on the fused results before the cut."""
