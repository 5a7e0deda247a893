"""Routes between PEs through communication nodes."""
from __future__ import annotations

from collections import deque

import networkx as nx

from moa.errors import NoRouteError


def shortest_cn_path(graph: nx.Graph, src: str, dst: str) -> tuple[str, ...]:
    """The CNs of a fewest-hop path from PE ``src`` to PE ``dst`` whose intermediate
    nodes are all CNs (node attribute ``kind == "cn"``).  Among shortest paths, the one
    whose sequence of CN names is lexicographically smallest is chosen, so routes do not
    depend on declaration order.  ``src == dst`` gives the empty route."""
    if src == dst:
        return ()
    distance = {dst: 0}
    queue = deque([dst])
    while queue:
        node = queue.popleft()
        for nb in graph.neighbors(node):
            if nb not in distance and (nb == src or graph.nodes[nb]["kind"] == "cn"):
                distance[nb] = distance[node] + 1
                if nb != src:
                    queue.append(nb)
    if src not in distance:
        raise NoRouteError(f"no route from PE '{src}' to PE '{dst}' through communication nodes")
    path, node = [], src
    while True:
        node = min(nb for nb in graph.neighbors(node) if distance.get(nb) == distance[node] - 1
                   and (nb == dst or graph.nodes[nb]["kind"] == "cn"))
        if node == dst:
            return tuple(path)
        path.append(node)


def route_to_cn(graph: nx.Graph, src: str, cn: str) -> tuple[str, ...]:
    """The CNs of a fewest-hop path from PE ``src`` to CN ``cn``, ending with ``cn``
    (intermediate nodes are CNs, ties broken as in :func:`shortest_cn_path`)."""
    if graph.nodes[cn]["kind"] != "cn":
        raise NoRouteError(f"'{cn}' is a PE, not a communication node")
    try:
        return shortest_cn_path(graph, src, cn) + (cn,)
    except NoRouteError:
        raise NoRouteError(f"no route from PE '{src}' to communication node '{cn}'") from None
