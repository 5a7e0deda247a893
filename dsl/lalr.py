"""The LALR parsers of the grammars (``dsl/grammars/*.lark``, sharing ``common.lark``):
built once per format with the module's lexer (:mod:`dsl.lexer`) and the inline
transformer (:mod:`dsl.transformer`), run on a text under a lock (the transformer holds
the file name), their syntax errors turned into positioned messages
(:mod:`dsl.syntax_errors`).
"""
from __future__ import annotations

import functools
import gc
import os
import sys
import threading

from lark import Lark
from lark.exceptions import UnexpectedInput

from dsl.lexer import FastLexer
from dsl.syntax_errors import syntax_error
from dsl.transformer import Builder

GRAMMAR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammars")

_parsers: dict[str, tuple[Lark, Builder]] = {}
_lock = threading.RLock()


def _parser(kind: str) -> tuple[Lark, Builder]:
    with _lock:
        if kind not in _parsers:
            builder = Builder(models=kind == "moa")
            lark = Lark.open(os.path.join(GRAMMAR_DIR, f"{kind}.lark"), parser="lalr",
                             lexer=FastLexer,
                             transformer=builder, maybe_placeholders=True,
                             propagate_positions=False, cache=cache_file(kind))
            _speed_up(lark)
            builder.set_number(lark.get_terminal("NUMBER").pattern.to_regexp())
            _parsers[kind] = (lark, builder)
        return _parsers[kind]


def cache_file(kind: str) -> str | bool:
    """Where lark keeps the analysed tables of grammar ``kind`` between runs (a third of
    the start-up of ``mapeval check`` goes to building them): ``mapeval/`` in the user's
    cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``).  lark checks the file against
    the grammar, its options, lark's and Python's version and rebuilds it when any
    differs, or when it cannot be read; False (no cache) where the folder cannot be
    made."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(root, "mapeval")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    return os.path.join(folder, "grammar-{}-py{}{}.cache".format(kind, *sys.version_info[:2]))


def _speed_up(lark: Lark) -> None:
    """Key the parse table by plain ``str`` objects and give its rules the identical
    objects as names: lark uses ``Token`` objects for imported terminals and rules,
    whose ``__eq__`` costs a Python call on every table lookup.  Purely an
    optimisation of lark's internal tables; on any surprise it leaves them alone."""
    try:
        from lark.parsers.lalr_analysis import Reduce
        states = lark.parser.parser.parser.parse_table.states
        canon: dict[str, str] = {}
        for actions in states.values():
            plain = {canon.setdefault(str(k), str(k)): v for k, v in actions.items()}
            actions.clear()
            actions.update(plain)
        for actions in states.values():
            for action, arg in actions.values():
                if action is Reduce and type(arg.origin.name) is not str:
                    arg.origin.name = canon.get(str(arg.origin.name), str(arg.origin.name))
    except Exception:  # pragma: no cover - lark internals changed
        pass


def gc_paused(fn):
    """Run ``fn`` with the cyclic garbage collector paused: parsing allocates many small
    objects (and no cycles worth collecting), and the collector's passes over them cost
    about a third of the time of a large file.  The previous state is restored."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return wrapper


def parse_text(kind: str, text: str, filename: str):
    """The transformer's output for ``text`` in format ``kind`` (``sdf``, ``moa``,
    ``map``, ``expr``); a syntax error is a :class:`~dsl.errors.ParseError`."""
    lark, builder = _parser(kind)
    with _lock:
        builder.filename = filename
        try:
            return lark.parse(text if text.endswith("\n") else text + "\n")
        except UnexpectedInput as exc:
            raise syntax_error(exc, lark, text, filename) from None
