"""Evaluators: the reference evaluator (the plain statement of the semantics and the
tests' oracle), the batch evaluators of mappings and measurement rows, mapped timing,
sweeps and the picture of a mapping."""
