"""``agrag.common``: the data models under the import paths of the spec (``agrag.common.data_models.*``)."""
