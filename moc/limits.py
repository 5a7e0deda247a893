"""Limits of the SDF analyses: work that no exact method bounds is refused past these.

Each is a module constant read where it is enforced; the command line raises it with
``--limit NAME=N`` (``mapping.limits`` lists the names).
"""

#: firings (HSDF expansion) or firing runs (deadlock check) of one iteration
MAX_FIRINGS = 10_000_000

#: states of one state-space exploration of a self-timed execution (moc.self_timed)
MAX_STATES = 1_000_000
