"""The Kùzu graph store adapter, one module per role; ``KuzuGraphStore`` composes them.

All ``import kuzu`` and all Cypher of agrag live in this package: ``*_cypher.py`` beside the role that sends it.
"""
