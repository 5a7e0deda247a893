"""The names of the text formats (dsl.names): the keywords and the NAME pattern are the
grammars' own, and every name that identifier() makes is read back, bare, in every
position of every language."""
import os

import pytest
from hypothesis import given, settings, strategies as st
from lark import Lark

import dsl
from dsl.lalr import GRAMMAR_DIR
from dsl.lexer import FastLexer
from dsl.names import (IDENTIFIER, KEYWORDS, MAP_KEYWORDS, MOA_KEYWORDS, NAME, SDF_KEYWORDS,
                       identifier, is_identifier, unique)
from dsl.printer import format_name


def grammar(kind: str) -> Lark:
    return Lark.open(os.path.join(GRAMMAR_DIR, f"{kind}.lark"), parser="lalr",
                     lexer=FastLexer)


@pytest.mark.parametrize("kind, keywords", [
    ("sdf", SDF_KEYWORDS), ("moa", MOA_KEYWORDS), ("map", MAP_KEYWORDS)])
def test_the_keywords_are_the_words_the_grammar_spells_out(kind, keywords):
    words = {t.pattern.value for t in grammar(kind).terminals
             if t.pattern.type == "str" and IDENTIFIER.match(t.pattern.value)}
    assert words == keywords


def test_the_identifier_pattern_is_the_grammars_name_terminal():
    assert grammar("sdf").get_terminal("NAME").pattern.value == NAME


def test_identifier_examples():
    assert identifier("foo.bar") == "foo_bar"
    assert identifier("std::vector<int>::at") == "std__vector_int___at"
    assert identifier("1st") == "_1st"
    assert identifier("") == "_"
    assert identifier("café") == "caf_"            # NAME is ASCII: é is no letter of it
    assert identifier("actor") == "actor_" and identifier("metric") == "metric_"
    assert identifier("pe", keywords=()) == "pe"
    assert identifier("ok_2") == "ok_2"
    assert unique("a", {"a", "a_2"}) == "a_3" and unique("b", {"a"}) == "b"


def sdf_text(n):
    return (f"sdf {n} {{\n    param {n} = 1\n    actor {n} [a = {n}]\n"
            f"    {n} -> {n} [delay = 1]\n    channel {n} : {n} -> {n} [delay = 1]\n}}\n")


def moa_text(n):
    return (f"moa {n} {{\n    param {n} = 1\n    type {n}\n    pe {n} : {n} [a = {n}]\n"
            f"    cn {n}_\n    {n} -- {n}_\n}}\n")


def map_text(n):
    return (f"mapping {n} {{\n    {n} -> {n}\n    channel {n} via {n}\n"
            f"    channel {n} -> {n} via {n}\n}}\n")


# arbitrary text (non-ASCII letters, digits first, punctuation), and keywords
TEXTS = st.one_of(st.text(max_size=12), st.sampled_from(sorted(KEYWORDS)),
                  st.from_regex(r"[0-9A-Za-z_]{1,6}", fullmatch=True))


@settings(max_examples=150, deadline=None)
@given(TEXTS)
def test_every_name_identifier_makes_is_read_back_bare_in_every_language(text):
    n = identifier(text)
    assert is_identifier(n, KEYWORDS)
    assert identifier(n) == n
    for keywords in (SDF_KEYWORDS, MOA_KEYWORDS, MAP_KEYWORDS):
        assert format_name(n, keywords) == n           # the printer writes it bare
    graph, = dsl.parse_sdf(sdf_text(n))
    assert graph.name == n and list(graph.actors) == [n] and n in graph.params
    assert n in graph.channels
    arch, = dsl.parse_moa(moa_text(n))
    assert arch.name == n and n in arch.types and n in arch.params
    assert set(arch.elements) == {n, n + "_"} and arch.links
    mapping, = dsl.parse_map(map_text(n))
    assert mapping.name == n and dict(mapping.assignment) == {n: n}
    assert set(mapping.routes) == {n, f"{n}->{n}"}
