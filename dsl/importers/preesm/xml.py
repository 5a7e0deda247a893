"""PREESM's XML files read with the line and column of every element; namespaces
stripped from tags and attribute names (S-LAM writes ``spirit:name``)."""
from __future__ import annotations

from dsl.importers.sdf3 import parse_xml, strip_namespaces


def read_xml(path):
    """``(root, where)``: the root element and a function from an element to its
    ``(file, line, column)``."""
    root, where = parse_xml(str(path))
    strip_namespaces(root)
    for el in root.iter():
        if any("}" in k for k in el.attrib):
            for key in [k for k in el.attrib if "}" in k]:
                el.attrib[key.split("}", 1)[1]] = el.attrib.pop(key)
    return root, where


def children(el, tag):
    """The child elements of ``el`` named ``tag`` (namespace-free)."""
    return [c for c in el if c.tag == tag]


def child_text(el, tag, default=None):
    c = el.find(tag)
    return default if c is None or c.text is None else c.text.strip()
