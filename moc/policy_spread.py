"""One step of Howard's policy improvement spread along the edges into the nodes it
changed, before the whole policy is evaluated again (a Gauss-Seidel round on the
frontier, as in modified policy iteration).

Where the best path zigzags between two chains of firings (an actor's own order and a
channel to another actor), each step of plain policy iteration moves the improvement
one firing back: Kiter's ``JPEG2000_sized`` under ``starts`` took 346 steps in which the
same 9-18 nodes gained a constant amount.  Spreading a step over the edges into the
nodes it changed, once steps creep so, moves it as far as it goes (within a frontier and
a budget of edges and rounds) before the next evaluation: 377 steps to 50 on that whole
iteration.  A switch taken so is an improvement of the policy as Howard's are: a cycle
it closes has gained along every edge, so its ratio is above the one it replaces.

Steps toward larger ratios (where the policy's cycles differ) creep the same way, an
edge back from the better cycle each: :func:`climb` takes them back along the edges
into the nodes a step switched, as far as a larger ratio reaches."""
from __future__ import annotations

import numpy as np

from moc.group_first import first_per

#: steps in a row at one ratio, each changing at most :func:`frontier` nodes, after
#: which steps are spread (the index of the edges into each node costs a sort of the
#: edges: 0.15 s on Kiter's autogen1, whose last steps are three such)
CREEP_STEPS = 4
#: the nodes a round may change, at least, and as a share of all: a step that changes
#: more (early steps change up to a third of the nodes) is left to the evaluation of
#: the whole policy, which costs less there than rounds over such frontiers
LEAST_FRONTIER = 64
FRONTIER_SHARE = 1 / 256


#: the edges whose work a round's numpy calls cost: a spread or climb takes at most one
#: round per that many edges of the graph (Kiter's autogen1: 26,056 rounds of a node or
#: two, 2.6 s, where its 24 steps take 3 s in all), or :data:`LEAST_ROUNDS`
ROUND_EDGES = 1024
LEAST_ROUNDS = 1024


class Budget:
    """What rounds may look at before the next evaluation of the whole policy: as many
    edges as the graph has (``m``), in at most ``max(LEAST_ROUNDS, m / ROUND_EDGES)``
    rounds."""

    def __init__(self, m: int):
        self.edges, self.rounds = m, max(LEAST_ROUNDS, m // ROUND_EDGES)

    def spend(self, edges: int) -> bool:
        """Charge a round of ``edges`` edges: whether the budget still holds."""
        self.edges -= edges
        self.rounds -= 1
        return self.edges >= 0 and self.rounds >= 0


def frontier(n: int) -> int:
    """The nodes a round may change, of ``n``."""
    return max(LEAST_FRONTIER, int(n * FRONTIER_SHARE))


class IntoEdges:
    """The edges into each node of a graph (heads ``v``, nodes ``0..n-1``)."""

    def __init__(self, v, n: int):
        self.order = np.argsort(v, kind="stable")
        self.first = np.searchsorted(v[self.order], np.arange(n + 1))

    def of(self, nodes):
        """The edges into ``nodes`` (distinct node numbers), node by node."""
        begin = self.first[nodes]
        counts = self.first[nodes + 1] - begin
        keep = counts > 0
        b, c = begin[keep], counts[keep]
        total = int(c.sum())
        if not total:
            return np.zeros(0, dtype=np.int64)
        # positions in ``order``: runs of consecutive ones, each from its node's first
        steps = np.ones(total, dtype=np.int64)
        steps[0] = b[0]
        steps[np.cumsum(c)[:-1]] = b[1:] - (b[:-1] + c[:-1] - 1)
        return self.order[np.cumsum(steps)]


def spread(u, v, w, h, ratio: float, x, policy, changed, into: IntoEdges,
           noise: float) -> None:
    """Rounds after a step of Howard's improvement at one ``ratio`` everywhere:
    ``changed`` the nodes whose edge the step switched (distinct, ascending), ``x``
    their new values and the old potentials elsewhere (a copy: this raises its
    entries).  Each round takes, of the edges into the nodes the round before changed,
    those whose value ``w − ratio·h + x[v]`` beats their tail's ``x`` by more than
    ``noise``, the best per tail (of values equal within ``noise`` the first edge, as
    Howard's steps take it), into ``policy``; it stops where none does, past the
    frontier's size, or past its :class:`Budget`."""
    limit = frontier(len(x))
    budget = Budget(len(u))
    while len(changed) <= limit:
        edges = into.of(changed)
        if not len(edges) or not budget.spend(len(edges)):
            return
        value = w[edges] - ratio * h[edges] + x[v[edges]]
        ahead = value - x[u[edges]] > noise
        if not ahead.any():
            return
        edges, value = edges[ahead], value[ahead]
        order = np.lexsort((edges, u[edges]))
        edges, value = edges[order], value[order]
        pick = first_per(u[edges], value, noise)
        changed = u[edges[pick]]               # one per tail, ascending
        policy[changed] = edges[pick]
        x[changed] = value[pick]


def climb(u, v, eta, reached, policy, changed, into: IntoEdges, tol: float) -> None:
    """Rounds after a step of Howard's improvement toward larger cycle ratios (where
    ``eta``, each node's policy cycle's ratio, differs): ``changed`` the nodes switched
    to an edge toward ratio ``reached`` (distinct, ascending).  Each round takes the
    edges into the nodes the round before changed whose tail's ratio is below that of
    the head by more than the tolerance, the largest per tail (of equal ones the
    first), into ``policy``: the improvement climbs back as far as it reaches, where
    plain steps climb one edge each (SDF3's generator's 25-actor graph of 595,347
    firings: 171 steps of 0.15 s).  The ratio only grows along a round's switches, so
    they close no cycle; it stops where none switches or past its :class:`Budget`."""
    eta = eta.copy()
    eta[changed] = reached
    budget = Budget(len(u))
    while len(changed):
        edges = into.of(changed)
        if not len(edges) or not budget.spend(len(edges)):
            return
        head = eta[v[edges]]
        up = head > eta[u[edges]] + tol * (1 + np.abs(eta[u[edges]]))
        if not up.any():
            return
        edges, head = edges[up], head[up]
        order = np.lexsort((edges, u[edges]))
        edges, head = edges[order], head[order]
        pick = first_per(u[edges], head, tol * (1 + float(np.abs(head).max())))
        changed = u[edges[pick]]
        policy[changed] = edges[pick]
        eta[changed] = head[pick]
