"""``mapeval analyse --tradeoff``: the storage-throughput trade-off of an application
alone (:func:`moc.tradeoff.tradeoff`), printed as a table or JSON, and one of its points
written back to an ``.sdf`` as channel bounds (a back-edge per channel whose initial
tokens are the free space), which ``mapeval analyse`` then times at that point's
throughput."""
from __future__ import annotations


from mapping.errors import InputError
from moc.exact_times import exact_text
from moc.record import record

@record
class Front:
    """The trade-off of application ``application`` (firing times: attribute ``exec``)."""

    application: str
    exec: str
    tradeoff: object
    graph: object

    def to_dict(self) -> dict:
        return {"application": self.application, "exec": self.exec,
                **self.tradeoff.to_dict()}

    def __str__(self) -> str:
        t = self.tradeoff
        lines = [f"storage-throughput trade-off of '{self.application}' (firing times: "
                 f"actor attribute '{self.exec}', unlimited processors)"]
        if not t.points:
            lines.append("  no point found within the budget")
        names = list(self.graph.channels)
        width = max([len("size")] + [len(str(p.size)) for p in t.points])
        lines.append(f"  {'point':>5}  {'size':>{width}}  throughput")
        for i, p in enumerate(t.points, 1):
            lines.append(f"  {i:>5}  {p.size:>{width}}  {exact_text(p.throughput)}")
            for d in p.distributions:
                lines.append("         " + ", ".join(f"{n}={d[n]}" for n in names))
        lines.append(f"  max throughput (unbounded buffers): {exact_text(t.max_throughput)}")
        lines.append("  complete: the front reaches it" if t.complete else
                     f"  stopped at the budget: the front is exact up to total size "
                     f"{t.proven_size}")
        if t.top is not None:
            low, high = t.last_sizes
            lines.append(f"  max throughput reached with size {t.top.size}: " + ", ".join(
                f"{n}={t.top.distributions[0][n]}" for n in names))
            lines.append("    the front's last point (no smaller distribution reaches it)"
                         if low == high else
                         f"    the front's last point has a size from {low} to {high}")
        lines.append(f"  explored distributions: {t.explored}")
        lines.append(f"  method: {t.method}")
        from moc.csdf_kperiodic import ORDERS
        from moc.phases import cyclo_static
        if cyclo_static(self.graph):
            lines.append(f"  csdf order: {t.order}: {ORDERS[t.order]}")
        return "\n".join(lines)


def load_front(args, command: str) -> Front:
    """The trade-off of the application named by ``args.files`` (no architecture)."""
    from mapping.cli.inputs import classify, load_single, one, parse_params
    from mapping.overrides import check_overrides
    from moc.tradeoff import tradeoff

    inputs = classify(args.files, ("sdf", "moa", "map"))
    if inputs.moa or inputs.map or args.map is not None or args.mapping is not None:
        raise InputError(f"mapeval {command}: the trade-off is of the application alone "
                         "(an architecture or mapping is not taken)")
    app = load_single(one(inputs.sdf, "sdf", command), "sdf", args.graph)
    params = parse_params(args.param)
    check_overrides(params, app.params)
    attr = args.exec_attr or "exec"
    graph = app.bind(params)
    budget = args.budget if args.budget and args.budget > 0 else None
    order = args.csdf_order or "ends"
    if order != "ends" and args.timing == "state-space":
        from moc.tradeoff import STATE_SPACE_ORDER
        raise InputError(f"mapeval {command}: --timing state-space --csdf-order {order}: "
                         f"{STATE_SPACE_ORDER}")
    return Front(app.name, attr, tradeoff(graph, exec_attr=attr, budget=budget,
                                          method=args.timing,
                                          order=order), graph)


def run_tradeoff(args) -> int:
    from mapping.output import print_json, write_atomically
    if getattr(args, "no_simulate", False):
        raise InputError("mapeval analyse: --tradeoff and --no-simulate do not go together")
    front = load_front(args, "analyse --tradeoff")
    if args.output is not None:
        write_atomically(args.output, written_back(front, args.point), args.files,
                         (".sdf",), "the application")
    elif args.point is not None:
        raise InputError("mapeval analyse: --point chooses the point -o writes; give -o")
    if args.json:
        print_json(front.to_dict())
    else:
        print(front)
    return 0


def written_back(front: Front, point: int | None) -> str:
    """The ``.sdf`` text of the application with point ``point`` (1-based; default the
    last) as channel bounds: its first distribution."""
    from dsl.printer import format_sdf
    from moc.tradeoff import bounded_graph
    points = front.tradeoff.points
    if not points:
        raise InputError("mapeval analyse --tradeoff: no point to write (none found "
                         "within the budget)")
    index = len(points) if point is None else point
    if not 1 <= index <= len(points):
        raise InputError(f"mapeval analyse --tradeoff: --point {point}: the front has "
                         f"points 1 to {len(points)}")
    chosen = points[index - 1]
    if chosen.size == 0:
        raise InputError(f"mapeval analyse --tradeoff: point {index} is no storage at all "
                         "(throughput 0): nothing to write")
    return format_sdf(bounded_graph(front.graph, chosen.distributions[0]))
