"""A self-timed execution by time steps of 1, written for the tests of cyclo-static
graphs (integer phase times of at least 1), against which ``moc``'s buffer maxima and
trade-off are checked: a firing takes the tokens of its phase from its inputs (and,
where channels have capacities, the space for what it writes) as it starts, and at its
end writes its tokens (and frees the space of what it read).  ``running[a]`` holds an
actor's firings as ``(end, phase)``."""
from __future__ import annotations


def phase(value, k):
    """The value of phase ``k`` of a rate or time (a tuple per phase, or one value)."""
    return value[k % len(value)] if isinstance(value, tuple) else value


def phase_counts(graph):
    """Per actor, its number of phases (from its times and its rates)."""
    n = dict.fromkeys(graph.actors, 1)
    for a, actor in graph.actors.items():
        for v in actor.attrs.values():
            if isinstance(v, tuple):
                n[a] = len(v)
    for ch in graph.channels.values():
        for a, v in ((ch.src, ch.prod), (ch.dst, ch.cons)):
            if isinstance(v, tuple):
                n[a] = len(v)
    return n


def end_firings(graph, t, tokens, running, space=None):
    """The firings that end at ``t`` write their tokens and free the space they read."""
    for a in graph.actors:
        for end, k in [r for r in running[a] if r[0] == t]:
            running[a].remove((end, k))
            for ch in graph.channels.values():
                if ch.src == a:
                    tokens[ch.name] += phase(ch.prod, k)
                if ch.dst == a and space is not None:
                    space[ch.name] += phase(ch.cons, k)


def start_firings(graph, n, t, tokens, started, running, space=None, ends_in_order=True):
    """Each actor starts, one after another, the firings its phase's tokens (and space)
    allow; a firing ends at its phase time after ``t`` and (``ends_in_order``) not
    before the actor's previous one."""
    chans = list(graph.channels.values())
    moved = True
    while moved:
        moved = False
        for a in graph.actors:
            k = started[a] % n[a]
            ins = [ch for ch in chans if ch.dst == a]
            outs = [ch for ch in chans if ch.src == a] if space is not None else []
            if all(tokens[ch.name] >= phase(ch.cons, k) for ch in ins) and \
                    all(space[ch.name] >= phase(ch.prod, k) for ch in outs):
                for ch in ins:
                    tokens[ch.name] -= phase(ch.cons, k)
                for ch in outs:
                    space[ch.name] -= phase(ch.prod, k)
                end = t + phase(graph.actors[a].attrs["exec"], k)
                if ends_in_order:
                    end = max([end] + [e for e, _ in running[a]])
                running[a].append((end, k))
                started[a] += 1
                moved = True
