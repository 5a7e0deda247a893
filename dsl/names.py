"""Names in the ``.sdf``, ``.moa`` and ``.map`` formats: which ones may be written
bare, the keywords of each language, and how an importer turns a foreign name into
one that may be written bare.

A bare name is an identifier, the grammars' ``NAME`` terminal
(``dsl/grammars/common.lark``): an ASCII letter or ``_``, then ASCII letters, digits
and ``_``.  A keyword is a word that a language's grammar spells out.  The lexer reads
a keyword as a keyword wherever the parser accepts it (at the start of a statement,
say), so a name that is a keyword is written quoted: the grammars' ``name`` is
``NAME | STRING``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

#: the pattern of the grammars' NAME terminal
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
IDENTIFIER = re.compile(NAME + r"\Z")

SDF_KEYWORDS = frozenset({"sdf", "param", "actor", "channel"})
MOA_KEYWORDS = frozenset({"moa", "param", "lambda", "aggregate", "metric", "type", "pe",
                          "cn"})
MAP_KEYWORDS = frozenset({"mapping", "channel", "via"})
#: the words that are a keyword in at least one of the languages
KEYWORDS = SDF_KEYWORDS | MOA_KEYWORDS | MAP_KEYWORDS


def is_identifier(text: str, keywords: Iterable[str] = ()) -> bool:
    """Whether ``text`` may be written bare: an identifier that is not in ``keywords``."""
    return IDENTIFIER.match(text) is not None and text not in keywords


def identifier(text: str, keywords: Iterable[str] = KEYWORDS) -> str:
    """``text`` made into a name that may be written bare: each character outside
    ``[A-Za-z0-9_]`` becomes ``_`` (a non-ASCII letter too), a leading digit or an
    empty text gets a ``_`` in front, and a word of ``keywords`` (by default the
    keywords of every language) a ``_`` after it.  An identifier that is not in
    ``keywords`` comes back unchanged."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", text)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if ident in keywords else ident


def unique(name: str, taken: Iterable[str]) -> str:
    """``name``, or the first of ``name_2``, ``name_3``, ... that is not in ``taken``."""
    taken = set(taken)
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate
