"""An independent oracle: the value of a mapping computed from the words of SPEC §3-§6.

Written from the specification alone (plus issue 8's rules on unknown metrics and
unvalued mappings, and the README's documented decisions, each quoted where used),
without reading or importing ``mapping``, ``moa`` or the batch evaluator, so that the production evaluators (which share one semantic core)
can be checked against something that does not share it.  Slow and plain on purpose:
fractions for the repetition vector, Python loops and ``math.fsum`` for the rest.

Problems are plain data:

- ``app = {"actors": {name: {attr: value}}, "channels": [channel, ...]}`` with
  ``channel = {"name", "src", "dst", "prod", "cons", "delay", "size", "attrs"}``;
- ``arch = {"lambda": x, "pes": {name: element}, "cns": {name: element},
  "links": [(a, b), ...]}`` with ``element = {"models": {metric: (model, {param: v})},
  "local": cn_or_None}``, declaration order kept by the dicts;
- ``mapping = {actor: pe}``.

:func:`sdf_text` and :func:`moa_text` write the same data in the ``.sdf``/``.moa``
languages, for the production code to parse.
"""
from __future__ import annotations

import math
from collections import deque
from fractions import Fraction

PER_TOKEN = ("lsla", "gsla", "gsla_power", "logca")
ELEMENT_LEVEL = ("roofline", "bandwidth")


# --- §3: the application ---------------------------------------------------------------

def repetition_vector(app):
    """SPEC §3: "the smallest positive integers with prod(e)·q(src) = cons(e)·q(dst) for
    every channel, per connected component, exact (integers/fractions, no floats)"."""
    neighbours = {a: [] for a in app["actors"]}
    for ch in app["channels"]:
        # q(dst) = q(src)·prod/cons
        neighbours[ch["src"]].append((ch["dst"], Fraction(ch["prod"], ch["cons"])))
        neighbours[ch["dst"]].append((ch["src"], Fraction(ch["cons"], ch["prod"])))
    rate = {}
    q = {}
    for start in app["actors"]:
        if start in rate:
            continue
        rate[start] = Fraction(1)
        component = [start]
        todo = deque([start])
        while todo:
            a = todo.popleft()
            for b, ratio in neighbours[a]:
                if b not in rate:
                    rate[b] = rate[a] * ratio
                    component.append(b)
                    todo.append(b)
        scale = 1
        for a in component:
            scale = scale * rate[a].denominator // math.gcd(scale, rate[a].denominator)
        ints = [int(rate[a] * scale) for a in component]
        divisor = 0
        for v in ints:
            divisor = math.gcd(divisor, v)
        for a, v in zip(component, ints):
            q[a] = v // divisor
    for ch in app["channels"]:
        assert ch["prod"] * q[ch["src"]] == ch["cons"] * q[ch["dst"]], "inconsistent graph"
    return q


def tokens(app, q):
    """SPEC §3: "actor a contributes q(a) processing tokens, each carrying quanta and the
    actor's attributes. Channel e contributes q(src(e)) communication tokens (one per
    producer firing) with quanta = prod(e)·size(e) bytes, carrying the channel's
    attributes; a communication token's gamma defaults to the producer's."

    Returns ``(processing, communication)``: per actor and per channel, ``(count, token)``
    with ``token`` a dict of attributes including ``quanta``.
    """
    processing = {}
    for name, attrs in app["actors"].items():
        token = dict(attrs)
        token.setdefault("quanta", 1)
        processing[name] = (q[name], token)
    communication = {}
    for ch in app["channels"]:
        token = dict(ch["attrs"])
        token["quanta"] = ch["prod"] * ch["size"]
        producer = app["actors"][ch["src"]]
        if "gamma" not in token and "gamma" in producer:
            token["gamma"] = producer["gamma"]
        communication[ch["name"]] = (q[ch["src"]], token)
    return processing, communication


# --- §6: routes --------------------------------------------------------------------------

def route(arch, a, b):
    """SPEC §6: "a route for every channel whose ends sit on different PEs is the shortest
    path (fewest hops, ties broken by name) through CNs"; §4: "PEs are never
    intermediate hops of a route".  README: "ties broken by CN names" -- of the shortest
    CN sequences, the first in lexicographic order of their names.  Also used for the
    path from a PE to its memory CN (then ``b`` is that CN, the last hop)."""
    adjacent = {}
    for x, y in arch["links"]:
        adjacent.setdefault(x, set()).add(y)
        adjacent.setdefault(y, set()).add(x)
    cns = arch["cns"]
    paths = [[c] for c in sorted(adjacent.get(a, ())) if c in cns]
    seen = set()
    while paths:
        done = [p for p in paths if p[-1] == b or b in adjacent.get(p[-1], ()) and b not in cns]
        if done:
            return min(done)
        seen.update(p[-1] for p in paths)
        longer = []
        for p in paths:
            for c in sorted(adjacent.get(p[-1], ())):
                if c in cns and c not in seen and c not in p:
                    longer.append(p + [c])
        paths = longer
    raise AssertionError(f"no route from {a} to {b}")


def placement(app, arch, mapping, q):
    """SPEC §6 step 2: "Each processing token goes to its actor's PE; each communication
    token to every CN of its channel's route." On one PE "a channel goes through the
    PE's local CN if it has one, else it costs nothing."

    Returns ``{element: [(count, token, owner_pe, kind)]}`` where ``kind`` is
    ``"processing"`` or ``"communication"`` (``"traffic"`` for :func:`memory_traffic`) and ``owner_pe`` the PE whose phase the
    token belongs to in ``exclusive`` (README: a channel's tokens belong to its producer's
    PE).
    """
    processing, communication = tokens(app, q)
    placed = {e: [] for e in list(arch["pes"]) + list(arch["cns"])}
    for actor, (count, token) in processing.items():
        pe = mapping[actor]
        placed[pe].append((count, token, pe, "processing"))
    for ch in app["channels"]:
        count, token = communication[ch["name"]]
        src, dst = mapping[ch["src"]], mapping[ch["dst"]]
        if src == dst:
            local = arch["pes"][src].get("local")
            hops = [local] if local else []
        else:
            hops = route(arch, src, dst)
        for cn in hops:
            placed[cn].append((count, token, src, "communication"))
    return placed


# --- §5: cost models -----------------------------------------------------------------------

def token_cost(model, params, token):
    """SPEC §5, per-token models:
    lsla "alpha·quanta + beta";
    gsla "(alpha/gamma + beta)·S; S defaults to quanta, gamma to 1";
    gsla_power "a + b·S + c·S/gamma";
    logca "o + L·g + C·g^beta / A (latency=independent: o + L + C·g^beta/A); g defaults
    to quanta, C and beta to 1"."""
    quanta = token["quanta"]
    if model == "lsla":
        return params["alpha"] * quanta + params.get("beta", 0)
    if model == "gsla":
        S, gamma = token.get("S", quanta), token.get("gamma", 1)
        return (params["alpha"] / gamma + params.get("beta", 0)) * S
    if model == "gsla_power":
        S, gamma = token.get("S", quanta), token.get("gamma", 1)
        return params["a"] + params.get("b", 0) * S + params.get("c", 0) * S / gamma
    if model == "logca":
        g, C, beta = token.get("g", quanta), token.get("C", 1), token.get("beta", 1)
        A, o, L = params.get("A", 1), params.get("o", 0), params.get("L", 0)
        latency = L * g if params.get("latency", "dependent") == "dependent" else L
        return o + latency + C * g ** beta / A
    raise AssertionError(f"not a per-token model: {model}")


def roofline_traffic(token):
    """SPEC §5: "data D = Σ bytes with bytes = ops / intensity unless the token gives
    bytes (ops defaults to quanta, intensity to infinity)" -- one token's share of D."""
    ops = token.get("ops", token["quanta"])
    if "bytes" in token:
        return token["bytes"]
    intensity = token.get("intensity", math.inf)
    return ops / intensity


def roofline_time(params, placed_tokens):
    """SPEC §5: "compute time C = Σ ops / peak, data D = Σ bytes ..., element time
    max(C, D / bandwidth)"."""
    ops = math.fsum(n * t.get("ops", t["quanta"]) for n, t, _, _ in placed_tokens)
    data = math.fsum(n * roofline_traffic(t) for n, t, _, _ in placed_tokens)
    return max(ops / params["peak"], data / params.get("bandwidth", math.inf))


def memory_traffic(arch, placed, metric):
    """SPEC §5: "The traffic D also travels from the element to its memory CN along the
    route, and every CN on that route with a bandwidth model counts it; the memory CN
    itself counts miss·D."

    The product generalises the middle clause (README, Gables section): every CN on the
    route is charged the traffic through whatever model it has for the metric, as one
    token of ``D`` bytes (``miss·D`` at the memory CN): a bandwidth model sees ``D/B``,
    a per-token model the cost of that token (``lsla``: ``alpha·D + beta``).  Traffic is
    a physical quantity: an ``energy = lsla(alpha = J/byte)`` on a bus must see it, and a
    CN that silently ignored it would surprise.  README also: the PE's memory traffic
    comes from its model for the evaluated metric if that has a memory, else from its
    time model.

    Returns ``{cn: [(1, token, owner_pe, "traffic")]}`` with ``token = {"quanta": b,
    "bytes": b}``, in the shape of :func:`placement`'s entries."""
    traffic = {cn: [] for cn in arch["cns"]}
    for pe, element in arch["pes"].items():
        models = element["models"]
        model = next((models[m] for m in (metric, "time") if m in models
                      and models[m][0] == "roofline" and "memory" in models[m][1]), None)
        if model is None:
            continue
        params = model[1]
        data = math.fsum(n * roofline_traffic(t) for n, t, _, _ in placed[pe])
        if data == 0:
            continue
        memory = params["memory"]
        for cn in route(arch, pe, memory):
            size = params.get("miss", 1) * data if cn == memory else data
            traffic[cn].append((1, {"quanta": size, "bytes": size}, pe, "traffic"))
    return traffic


def energy_falls_back(models):
    """SPEC §6 step 5: "energy, where an element has power and time models but no energy
    model, is Σ power(t)·time(t) over its tokens" -- a product of token costs, so both
    models are per-token ones."""
    return "energy" not in models and all(
        m in models and models[m][0] in PER_TOKEN for m in ("power", "time"))


def known_metrics(arch):
    """The metrics some element can value: the names of its models, and ``energy`` where
    it falls back on ``power`` and ``time``.  Issue 8: a metric outside this set "must be
    an error listing the known metrics" (:class:`UnknownMetric`)."""
    known = set()
    for element in list(arch["pes"].values()) + list(arch["cns"].values()):
        known.update(element["models"])
        if energy_falls_back(element["models"]):
            known.add("energy")
    return sorted(known)


class UnknownMetric(Exception):
    """No element of the architecture can value the metric."""


class Unvalued(Exception):
    """Issue 8: "When every element of a prediction is unmodelled, say so" -- every
    element that handles a token (processing, communication or memory traffic) lacks a
    model for the metric, so the value would be a meaningless 0."""


def element_value(element, metric, placed_tokens):
    """SPEC §6 step 3: "Each element computes its value of m: the sum over its tokens for
    per-token models; the element formula for roofline and bandwidth. An element without a
    model for m contributes 0."  Step 5: "power is intensive: an element's power is the
    time-weighted mean of its tokens' power (the plain mean if it has no time model) ...
    energy, where an element has power and time models but no energy model, is
    Σ power(t)·time(t) over its tokens."  §5 bandwidth: "all bytes that cross it / B".

    An element-level time model (roofline, bandwidth) prices no single token, so power
    takes the plain mean there too.  ``placed_tokens`` include the memory traffic
    crossing the element (CNs).  Returns ``None`` when the element has no model for
    ``metric`` (unmodelled)."""
    models = element["models"]
    if metric == "energy" and energy_falls_back(models):
        return math.fsum(n * token_cost(*models["power"], t) * token_cost(*models["time"], t)
                         for n, t, _, _ in placed_tokens)
    if metric not in models:
        return None
    model, params = models[metric]
    if model == "roofline":
        return roofline_time(params, placed_tokens)
    if model == "bandwidth":
        return math.fsum(n * t.get("bytes", t["quanta"]) for n, t, _, _ in placed_tokens) \
            / params["B"]
    if metric == "power":
        if not placed_tokens:
            return 0.0
        if "time" in models and models["time"][0] in PER_TOKEN:
            weights = [n * token_cost(*models["time"], t) for n, t, _, _ in placed_tokens]
        else:
            weights = [n for n, _, _, _ in placed_tokens]
        powers = [token_cost(model, params, t) for _, t, _, _ in placed_tokens]
        return math.fsum(w * p for w, p in zip(weights, powers)) / math.fsum(weights)
    return math.fsum(n * token_cost(model, params, t) for n, t, _, _ in placed_tokens)


# --- §6: aggregation -------------------------------------------------------------------------

def evaluate(app, arch, mapping, metric="time", aggregate="sum"):
    """SPEC §6 step 4: "The system value combines element values, CN values scaled by
    lambda: sum -- Σ_PE + lambda·Σ_CN. max -- max(max_PE, lambda·max_CN). exclusive --
    each PE works alone in its own phase, whose time is the max of its own element value
    and of the share of its traffic at every CN it uses; the system value is the sum of
    the phases."  Shares follow the README: a channel's tokens belong to the producer's
    PE, a PE's memory traffic to that PE.

    Raises :class:`UnknownMetric` or :class:`Unvalued` (issue 8).  Returns ``(value,
    element_values, unmodelled)`` with element values before lambda."""
    if metric not in known_metrics(arch):
        raise UnknownMetric(metric)
    q = repetition_vector(app)
    placed = placement(app, arch, mapping, q)
    for cn, tokens in memory_traffic(arch, placed, metric).items():
        placed[cn] += tokens
    lam = arch["lambda"]
    values, unmodelled = {}, []
    for name, element in list(arch["pes"].items()) + list(arch["cns"].items()):
        value = element_value(element, metric, placed[name])
        if value is None:
            if placed[name]:
                unmodelled.append(name)
            value = 0.0
        values[name] = value
    if unmodelled and len(unmodelled) == len([e for e, tokens in placed.items() if tokens]):
        raise Unvalued(unmodelled)
    pe_values = [values[p] for p in arch["pes"]]
    cn_values = [values[c] for c in arch["cns"]]
    if aggregate == "sum":
        return math.fsum(pe_values) + lam * math.fsum(cn_values), values, unmodelled
    if aggregate == "max":
        return max(pe_values + [lam * v for v in cn_values]), values, unmodelled
    if aggregate == "exclusive":
        phases = []
        for pe in arch["pes"]:
            phase = values[pe]
            for cn, element in arch["cns"].items():
                share = [tok for tok in placed[cn] if tok[2] == pe]
                if share:
                    phase = max(phase, lam * (element_value(element, metric, share) or 0.0))
            phases.append(phase)
        return math.fsum(phases), values, unmodelled
    raise AssertionError(f"unknown aggregation {aggregate}")


def performance(app, value):
    """SPEC §6: "With metric = time, the result also gives throughput = 1/value and, where
    tokens carry ops, performance = Σ ops / value (Gables' P_attainable)", with §5's "ops
    defaults to quanta" for the processing tokens that do not carry it (communication
    tokens carry bytes, not operations) -- ``None`` where no token carries ``ops``."""
    q = repetition_vector(app)
    processing, _ = tokens(app, q)
    if not any("ops" in t for _, t in processing.values()):
        return None
    return math.fsum(n * t.get("ops", t["quanta"]) for n, t in processing.values()) / value


# --- the same data as text ---------------------------------------------------------------------

def _num(x):
    if isinstance(x, str):
        return x
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return repr(x)


def sdf_text(app, name="app"):
    """The ``.sdf`` text of ``app``."""
    lines = [f"sdf {name} {{"]
    for actor, attrs in app["actors"].items():
        body = ", ".join(f"{k} = {_num(v)}" for k, v in attrs.items())
        lines.append(f"    actor {actor} [{body}]" if body else f"    actor {actor}")
    for ch in app["channels"]:
        attrs = {"prod": ch["prod"], "cons": ch["cons"], "delay": ch["delay"], "size": ch["size"],
                 **ch["attrs"]}
        body = ", ".join(f"{k} = {_num(v)}" for k, v in attrs.items())
        lines.append(f"    channel {ch['name']} : {ch['src']} -> {ch['dst']} [{body}]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def moa_text(arch, name="arch"):
    """The ``.moa`` text of ``arch``."""
    lines = [f"moa {name} {{", f"    lambda = {_num(arch['lambda'])}"]
    for kind in ("pe", "cn"):
        for element, spec in arch[kind + "s"].items():
            attrs = [f"{metric} = {model}({', '.join(f'{k} = {_num(v)}' for k, v in params.items())})"
                     for metric, (model, params) in spec["models"].items()]
            if spec.get("local"):
                attrs.append(f"local = {spec['local']}")
            lines.append(f"    {kind} {element} [{', '.join(attrs)}]" if attrs
                         else f"    {kind} {element}")
    for a, b in arch["links"]:
        lines.append(f"    {a} -- {b}")
    lines.append("}")
    return "\n".join(lines) + "\n"
