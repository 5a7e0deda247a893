"""Routes between PEs through communication nodes.

The one rule (:func:`shortest_cn_path`): fewest hops, never through another PE; among
the fewest-hop routes the one whose CNs' ``route_cost`` sum is smallest (a CN attribute
the user sets to prefer a route: ``cn bus [..., route_cost = 1]`` sends traffic that
has an equally short alternative around the bus; default 0), and only then the one
whose CN names come first, so that a preferred route does not depend on what the
elements are called."""
from __future__ import annotations

from collections import deque

import networkx as nx

from moa.errors import NoRouteError

#: the node attribute holding a CN's route cost (``cn bus [route_cost = 1]``)
ROUTE_COST = "route_cost"


def cn_route_cost(graph: nx.Graph, cn: str) -> float:
    """What a route pays for crossing CN ``cn``: its ``route_cost`` node attribute, 0
    when unset."""
    return float(graph.nodes[cn].get(ROUTE_COST, 0.0))


def shortest_cn_path(graph: nx.Graph, src: str, dst: str) -> tuple[str, ...]:
    """The CNs of the preferred fewest-hop path from PE ``src`` to PE ``dst`` whose
    intermediate nodes are all CNs (node attribute ``kind == "cn"``): the smallest
    ``(Σ route_cost, CN names)`` among the fewest-hop paths (module docstring).
    ``src == dst`` gives the empty route."""
    if src == dst:
        return ()
    distance = {dst: 0}
    order = []
    queue = deque([dst])
    while queue:
        node = queue.popleft()
        for nb in graph.neighbors(node):
            if nb not in distance and (nb == src or graph.nodes[nb]["kind"] == "cn"):
                distance[nb] = distance[node] + 1
                if nb != src:
                    queue.append(nb)
                    order.append(nb)
    if src not in distance:
        raise NoRouteError(f"no route from PE '{src}' to PE '{dst}' through communication nodes")
    # best[v] = (Σ cost, CNs from v to dst), built outward from dst
    best = {dst: (0.0, ())}
    for node in order + [src]:
        if distance[node] > distance[src]:
            continue
        options = []
        for nb in graph.neighbors(node):
            if distance.get(nb) != distance[node] - 1 or nb not in best:
                continue
            cost, path = best[nb]
            if nb != dst:
                cost, path = cost + cn_route_cost(graph, nb), (nb, *path)
            options.append((cost, path))
        if options:
            best[node] = min(options)
    return best[src][1]


def route_to_cn(graph: nx.Graph, src: str, cn: str) -> tuple[str, ...]:
    """The CNs of a fewest-hop path from PE ``src`` to CN ``cn``, ending with ``cn``
    (intermediate nodes are CNs, ties broken as in :func:`shortest_cn_path`)."""
    if graph.nodes[cn]["kind"] != "cn":
        raise NoRouteError(f"'{cn}' is a PE, not a communication node")
    try:
        return shortest_cn_path(graph, src, cn) + (cn,)
    except NoRouteError:
        raise NoRouteError(f"no route from PE '{src}' to communication node '{cn}'") from None



def unrouted_pes(graph: nx.Graph) -> list[tuple[list[str], list[str]]]:
    """Pairs of groups of PEs with no route between any PE of one and any of the other.
    Two PEs have a route when they link to one connected set of CNs (a route never
    crosses a PE); PEs that link to the same such sets form a group (in node order).  A
    PE with no link to a CN is in a group with no route at all: it is paired with each
    other group (empty when every PE reaches every other)."""
    cns = graph.subgraph(n for n, k in graph.nodes(data="kind") if k == "cn")
    component = {cn: i for i, part in enumerate(nx.connected_components(cns)) for cn in part}
    groups: dict[frozenset, list[str]] = {}
    for pe in (n for n, k in graph.nodes(data="kind") if k != "cn"):
        reach = frozenset(component[nb] for nb in graph.neighbors(pe) if nb in component)
        groups.setdefault(reach, []).append(pe)
    items = list(groups.items())
    pairs = [(a, b) for i, (ra, a) in enumerate(items) for rb, b in items[i + 1:]
             if not ra & rb]
    lone = groups.get(frozenset(), [])
    if len(lone) > 1:            # PEs without links reach no one, not even each other
        pairs.insert(0, (lone, lone))
    return pairs
