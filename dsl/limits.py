"""Limits of the text formats: inputs that would take unbounded memory or time.

Each is a module constant read where it is enforced; the command line raises it with
``--limit NAME=N`` (``mapping.limits`` lists the names).
"""

#: members of one array declaration (``pe p[0..N]``)
MAX_ARRAY_MEMBERS = 100_000
