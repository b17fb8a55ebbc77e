"""``agrag.retrieval``: recipe search under the import paths of the spec (``recipes``, ``search_engine``).

Re-exports only: the code lives in ``agrag.pipelines`` and ``agrag.components``.
"""
