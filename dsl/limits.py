"""Limits of the text formats: inputs that would take unbounded memory or time.

Each is a module constant read where it is enforced; the command line raises it with
``--limit NAME=N`` (``mapping.cli.limits`` lists the names); ``moc.limits.exceeded``
words the error, the same for every limit.
"""

__all__ = ["MAX_ARRAY_MEMBERS", "MAX_ELEMENTS", "MAX_LINKS"]

#: members of one array declaration (``pe p[0..N]``)
MAX_ARRAY_MEMBERS = 100_000

#: elements (PEs and CNs, array members counted) of one architecture
MAX_ELEMENTS = 1_000_000

#: links of one architecture, those a link between arrays (``p[*] -- c[*]``, one per
#: pair of members) expands to counted
MAX_LINKS = 1_000_000

