"""Expanders: steps that widen a fused result list, such as the graph walk from its entity hits."""
