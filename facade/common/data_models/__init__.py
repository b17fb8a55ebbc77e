"""``agrag.common.data_models``: one module per item a search returns, re-exporting ``agrag.components.data_models``."""
