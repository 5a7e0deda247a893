"""The names of array members and of system-metric terms, as the ``.moa`` language writes
them (a module of its own so that the parser of ``.sdf`` files does not load the cost
models)."""
from __future__ import annotations


def member_name(base: str, index: int) -> str:
    """The name ``base[index]`` of member ``index`` of the array ``base``."""
    return f"{base}[{index}]"


def term_name(metric: str, aggregate: str) -> str:
    """The name of the term ``metric[aggregate]`` of a system metric's expression."""
    return f"{metric}[{aggregate}]"


def split_term(name: str) -> tuple[str, str] | None:
    """``(metric, aggregate)`` of a term name ``metric[aggregate]``, else None (a
    parameter or another system metric)."""
    if not name.endswith("]") or "[" not in name:
        return None
    metric, _, aggregate = name[:-1].partition("[")
    return metric, aggregate
