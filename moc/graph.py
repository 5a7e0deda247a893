"""The SDF graph: actors, FIFO channels with rates, delays and token sizes.

Attribute values are numbers or parametric expressions: any object with an
``evaluate(env)`` method, where ``env`` maps parameter names to numbers or to further
expressions.  :meth:`SDFGraph.bind` resolves them to numbers.
"""
from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType

from moc.errors import SDFError
from moc.phases import InitialPhases, PhaseCounter, Phases, phase_counts
from moc.record import field, fields, record, replace

TYPE_CHECKING = False       # typing's constant, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any

    import networkx as nx

CHANNEL_FIELDS = ("prod", "cons", "delay", "size")


def resolve(value, env):
    """A number for ``value``: itself, or the evaluation of an expression in ``env``."""
    evaluate = getattr(value, "evaluate", None)
    return evaluate(env) if evaluate is not None else value


@record
class Actor:
    """An SDF actor; ``attrs`` holds ``quanta`` and model-specific attributes;
    ``initial_phases`` the phases it fires once before its periodic ones
    (:class:`moc.phases.InitialPhases`), or None."""

    name: str
    attrs: Mapping[str, Any] = field(default_factory=dict)
    origin: tuple | None = field(default=None, compare=False, repr=False)
    initial_phases: Any = None

    @property
    def quanta(self):
        return self.attrs.get("quanta", 1)


@record
class Channel:
    """A FIFO from ``src`` to ``dst``: ``prod`` tokens written per firing of ``src``,
    ``cons`` read per firing of ``dst``, ``delay`` initial tokens of ``size`` bytes.
    ``prod`` and ``cons`` may be given per phase of a cyclo-static actor
    (:class:`moc.phases.Phases`)."""

    name: str
    src: str
    dst: str
    prod: Any = 1
    cons: Any = 1
    delay: Any = 0
    size: Any = 1
    attrs: Mapping[str, Any] = field(default_factory=dict)
    origin: tuple | None = field(default=None, compare=False, repr=False)


#: a channel's rates, initial tokens and token size when its declaration leaves them out
#: (the :class:`Channel` record's defaults; printers leave out what equals them)
CHANNEL_DEFAULTS = {f.name: f.default for f in fields(Channel) if f.name in CHANNEL_FIELDS}


def default_channel_name(src: str, dst: str) -> str:
    """The name of a channel declared without one: ``src->dst`` (so a second channel
    between the same actors needs a name of its own)."""
    return f"{src}->{dst}"


class SDFGraph:
    """A named Synchronous Dataflow graph with ordered parameters, actors and channels.

    Built by :func:`dsl.loads_sdf` from text, or in Python::

        g = SDFGraph("pipe", params={"n": 4})
        g.add_actor("src", quanta=1)
        g.add_actor("work", quanta=100)
        g.add_channel("src", "work", prod=2, cons=1, size=4)

    ``params`` are the defaults of the parameters that attribute expressions (objects
    with ``evaluate(env)``, e.g. :func:`dsl.parse_expression` ``("n * 8")``) use."""

    def __init__(self, name: str = "app", params: Mapping[str, Any] | None = None, origin=None):
        _check_name(name, "graph", origin)
        self.name = name
        self.params: dict[str, Any] = dict(params or {})
        self.actors: dict[str, Actor] = {}
        self.channels: dict[str, Channel] = {}
        self.origin = origin
        self._phases = PhaseCounter()

    def __repr__(self):
        return f"SDFGraph({self.name!r}, actors={len(self.actors)}, channels={len(self.channels)})"

    def add_actor(self, name: str, origin=None, initial_phases=None, **attrs) -> Actor:
        """Add actor ``name`` with attributes ``attrs`` (``quanta``: the work of one
        firing that PE models price; ``exec``: its time for ``mapeval analyse``; any
        other number a cost model reads); returns the :class:`Actor`.
        ``initial_phases``: a :class:`moc.phases.InitialPhases`, the phases it
        fires once before its periodic ones (Kiter's ``a;b`` rates).

        Raises :class:`~moc.errors.SDFError` (a ``ValueError``) naming the actor for a
        duplicate name, a ``quanta`` that is not a finite non-negative number, a NaN
        attribute, or an empty list of phases; values that are expressions are checked
        by :meth:`bind`."""
        _check_name(name, "actor", origin)
        if name in self.actors:
            raise SDFError(f"duplicate actor '{name}' in graph '{self.name}'", origin)
        if any(type(v) is list for v in attrs.values()):
            attrs = {k: _phases_of(v) for k, v in attrs.items()}
        actor = Actor(name, MappingProxyType(attrs), origin)
        if initial_phases is not None:
            actor = _with_initial_phases(actor, initial_phases)
        for key, value in attrs.items():
            _checked(value, key, "actor", actor, known_only=True)
        self._phases.see_actor(actor)
        if all(map(_evaluated, attrs.values())):
            _mark_bound(actor)
        self.actors[name] = actor
        return actor

    def add_channel(self, src: str, dst: str, name: str | None = None, *,
                    prod=CHANNEL_DEFAULTS["prod"], cons=CHANNEL_DEFAULTS["cons"],
                    delay=CHANNEL_DEFAULTS["delay"], size=CHANNEL_DEFAULTS["size"],
                    origin=None, **attrs) -> Channel:
        """Add a FIFO from actor ``src`` to actor ``dst``: ``prod`` tokens written per
        firing of ``src``, ``cons`` read per firing of ``dst`` (positive integers, or per
        phase lists of non-negative integers with a positive sum), ``delay`` initial
        tokens (a non-negative integer), ``size`` bytes per token (a finite non-negative
        number; 0 for a channel that carries no data).  ``name`` defaults to ``src->dst``
        (a second channel between the same actors needs one); returns the
        :class:`Channel`.

        Raises :class:`~moc.errors.SDFError` (a ``ValueError``) naming the channel and
        the value for an unknown actor, a duplicate name, any value above out of its
        range, a per-phase ``delay``, ``size`` or attribute, or a number of phases that
        disagrees with the actor's; values that are expressions are checked by
        :meth:`bind`.  A whole-number float rate is kept as an int."""
        label = name if name is not None else default_channel_name(src, dst)
        actors, channels = self.actors, self.channels
        if src not in actors or dst not in actors:
            for end, role in ((src, "src"), (dst, "dst")):
                if end not in actors:
                    raise SDFError(f"channel '{label}' uses unknown actor '{end}'", origin,
                                   role)
        if name is None:
            if label in channels:
                raise SDFError(f"a second unnamed channel {label}: name it, as in "
                               f"'channel NAME : {src} -> {dst} [...]'", origin)
        else:
            _check_name(name, "channel", origin)
            if name in channels:
                raise SDFError(f"duplicate channel '{name}' in graph '{self.name}'", origin)
        if attrs or isinstance(delay, (tuple, list)) or isinstance(size, (tuple, list)):
            for key, value in (("delay", delay), ("size", size), *attrs.items()):
                if isinstance(value, (tuple, list)):
                    raise SDFError(f"channel '{label}': {key} cannot be given per phase "
                                   f"(only prod, cons and actor attributes are)", origin, key)
        channel = Channel(label, src, dst, _phases_of(prod), _phases_of(cons), delay, size,
                          MappingProxyType(attrs), origin)
        counts = (_known_count(channel.prod, "prod", channel),
                  _known_count(channel.cons, "cons", channel),
                  _known_count(delay, "delay", channel))
        if type(size) is not int or size < 0 or size > _FLOAT_MAX:
            _checked(size, "size", "channel", channel, known_only=True)
        for key, value in attrs.items():
            _checked(value, key, "channel", channel, known_only=True)
        if counts[0] is not channel.prod or counts[1] is not channel.cons or \
                counts[2] is not delay:
            channel = replace(channel, prod=counts[0], cons=counts[1], delay=counts[2])
        self._phases.see_channel(channel)
        if _evaluated(counts[0]) and _evaluated(counts[1]) and _evaluated(counts[2]) and \
                _evaluated(size) and all(map(_evaluated, attrs.values())):
            _mark_bound(channel)
        channels[label] = channel
        return channel

    def environment(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Parameter defaults with ``overrides`` applied (values may still be expressions)."""
        env = dict(self.params)
        for key, value in (overrides or {}).items():
            if key in env:
                env[key] = value
        return env

    def bind(self, overrides: Mapping[str, Any] | None = None, env: Mapping[str, Any] | None = None
             ) -> "SDFGraph":
        """A copy with every attribute evaluated and checked.

        :meth:`add_actor` and :meth:`add_channel` check the values known then; the
        values of expressions are checked here, once the parameters are known
        (``-p quanta=nan`` or a CSV row set them), by the same rules: rates are positive
        integers, delays non-negative integers, ``quanta`` and ``size`` finite and
        non-negative, no numeric attribute is NaN, the actors' numbers of phases agree.
        An actor or channel whose values were all numbers when :meth:`add_actor` or
        :meth:`add_channel` (or an earlier ``bind``) checked them is taken as it is (the
        objects are immutable); one placed in ``actors`` or ``channels``
        directly, e.g. a ``moc.record.replace`` copy, is checked here.
        """
        env = dict(env) if env is not None else self.environment(overrides)
        for name in [n for n in self.params if n in env]:  # in place: each evaluated once
            env[name] = resolve(env[name], env)
        bound = SDFGraph(self.name, {k: resolve(v, env) for k, v in env.items() if k in self.params},
                         self.origin)
        # an actor or channel whose values are numbers checked already (by add_actor,
        # add_channel or an earlier bind) is its own bound copy
        for actor in self.actors.values():
            if not getattr(actor, BOUND, False):
                attrs = {k: _checked(resolve(v, env), k, "actor", actor)
                         for k, v in actor.attrs.items()}
                actor = replace(actor, attrs=MappingProxyType(attrs))
                if all(map(_evaluated, attrs.values())):
                    _mark_bound(actor)
            bound.actors[actor.name] = actor
        for ch in self.channels.values():
            if not getattr(ch, BOUND, False):
                ch = _bound_channel(ch, env)
            bound.channels[ch.name] = ch
        phase_counts(bound)
        return bound

    def to_networkx(self) -> nx.MultiDiGraph:
        """Actors as nodes, channels as edges keyed by their names, all data plain
        (numbers and strings, expressions as their text), so that ``nx.write_graphml``
        and ``json.dumps(nx.node_link_data(g))`` work.  Node ``a``'s :class:`Actor` is
        ``self.actors[a]``; edge ``(u, v, k)``'s :class:`Channel` is ``self.channels[k]``.
        """
        import networkx as nx
        g = nx.MultiDiGraph(name=self.name)
        for actor in self.actors.values():
            g.add_node(actor.name, **{k: plain(v) for k, v in actor.attrs.items()})
        for ch in self.channels.values():
            data = {k: plain(v) for k, v in ch.attrs.items()}
            data.update((f, plain(getattr(ch, f))) for f in CHANNEL_FIELDS)
            g.add_edge(ch.src, ch.dst, key=ch.name, **data)
        return g

    def components(self) -> list[list[str]]:
        """Weakly connected components, each as actor names in declaration order."""
        order = {name: i for i, name in enumerate(self.actors)}
        neighbours: dict[str, list[str]] = {a: [] for a in self.actors}
        for ch in self.channels.values():
            neighbours[ch.src].append(ch.dst)
            neighbours[ch.dst].append(ch.src)
        seen: set[str] = set()
        comps = []
        for root in self.actors:
            if root in seen:
                continue
            seen.add(root)
            comp, todo = [root], [root]
            while todo:
                for b in neighbours[todo.pop()]:
                    if b not in seen:
                        seen.add(b)
                        comp.append(b)
                        todo.append(b)
            comps.append(sorted(comp, key=order.__getitem__))
        return comps


def _with_initial_phases(actor, initial_phases) -> Actor:
    if not isinstance(initial_phases, InitialPhases):
        raise SDFError(f"actor '{actor.name}': initial_phases must be an InitialPhases, "
                       f"not {type(initial_phases).__name__}", actor.origin)
    return replace(actor, initial_phases=initial_phases)


def plain(value):
    """``value`` as GraphML and JSON hold it: numbers and strings as they are, a
    fraction as a float, anything else (an expression, a tuple) as its text."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


#: attributes that are amounts: finite and non-negative
AMOUNTS = ("quanta", "size")
_FLOAT_MAX = sys.float_info.max


def _finite(value) -> bool:
    """Whether ``value`` is a finite float; an integer beyond the float range is not
    (every cost model computes in floats)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _shown(value) -> str:
    """``value`` for a message: an integer too long to read is given by its length
    (``str`` of one beyond 4,300 digits even raises)."""
    if isinstance(value, int) and abs(value) >= 10 ** 21:
        return f"an integer of about {value.bit_length() * 30103 // 100000 + 1} digits"
    return str(value)


def _phases_of(value):
    """A list given through the API is a per-phase value, as ``[3, 1, 1]`` in a file."""
    return Phases(value) if isinstance(value, list) else value


def _known(value) -> bool:
    """Whether ``value`` is known now (no expression that waits for parameters)."""
    return getattr(value, "evaluate", None) is None


def _check_name(name, kind, origin) -> None:
    if not isinstance(name, str) or not name:
        raise SDFError(f"{kind} name must be a non-empty string, got {name!r}", origin)


#: the attribute that marks an :class:`Actor` or :class:`Channel` (immutable) whose
#: values passed the checks of :meth:`SDFGraph.bind` and are as it would make them
#: (:func:`_evaluated`): its own bound copy.  Not a field: ``moc.record.replace``
#: makes an unmarked one, checked again.
BOUND = "_bound"


def _mark_bound(element) -> None:
    object.__setattr__(element, BOUND, True)


def _evaluated(value) -> bool:
    """Whether ``value`` is as :meth:`SDFGraph.bind` leaves it: no expression, and a
    per-phase value a :class:`Phases` of values that are neither expressions nor lists
    (bind makes a plain tuple one)."""
    if type(value) is int:
        return True
    if isinstance(value, tuple):
        return type(value) is Phases and (set(map(type, value)) == _INT or all(
            _known(v) and not isinstance(v, tuple) for v in value))
    return _known(value)


def _bound_channel(ch, env) -> Channel:
    """A copy of channel ``ch`` with its values evaluated in ``env`` and checked (see
    :meth:`SDFGraph.bind`), marked bound where they are all numbers."""
    prod, cons, delay, size = (resolve(ch.prod, env), resolve(ch.cons, env),
                               resolve(ch.delay, env), resolve(ch.size, env))
    prod = _as_count(prod, "prod", ch, True, True)
    cons = _as_count(cons, "cons", ch, True, True)
    delay = _as_count(delay, "delay", ch, False)
    size = _checked(size, "size", "channel", ch)
    attrs = {k: _checked(resolve(v, env), k, "channel", ch) for k, v in ch.attrs.items()}
    bound = replace(ch, prod=prod, cons=cons, delay=delay, size=size,
                    attrs=MappingProxyType(attrs))
    if _evaluated(size) and all(map(_evaluated, attrs.values())):
        _mark_bound(bound)
    return bound


_INT = {int}


def _int_phases(value) -> bool:
    """Whether ``value`` is a :class:`Phases` of plain ints (checked at once, in C)."""
    return type(value) is Phases and set(map(type, value)) == _INT


def _checked(value, key, kind, owner, known_only=False):
    """``value`` of attribute ``key`` of actor or channel ``owner``, or an error naming
    both: amounts (:data:`AMOUNTS`) must be finite non-negative numbers, and no number
    may be NaN (an infinity is a legitimate value elsewhere, e.g. ``intensity``).  A
    per-phase value (:class:`moc.phases.Phases`) is checked entry by entry; with
    ``known_only``, expressions are left for :meth:`SDFGraph.bind`."""
    if type(value) is int and (0 <= value <= _FLOAT_MAX or key not in AMOUNTS):
        return value                    # the common case, at once
    if isinstance(value, tuple):
        if _int_phases(value) and (key not in AMOUNTS or
                                   0 <= min(value) and max(value) <= _FLOAT_MAX):
            return value                # ints per phase, at once
        return Phases(_checked(v, key, kind, owner, known_only) for v in value)
    if known_only and not _known(value):
        return value
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if key in AMOUNTS and not (number and _finite(value) and value >= 0):
        raise SDFError(f"{kind} '{owner.name}': {key} must be a finite non-negative number, "
                       f"got {_shown(value)}", owner.origin, key)
    if isinstance(value, float) and math.isnan(value):
        raise SDFError(f"{kind} '{owner.name}': {key} is not a number (nan)", owner.origin, key)
    return value


def _known_count(value, what, channel):
    """``value`` of ``prod``, ``cons`` or ``delay`` checked as :meth:`SDFGraph.bind`
    checks it where it is known (entry by entry per phase; the positive sum of a cycle
    once every entry is known); expressions are left as they are."""
    positive = phased = what != "delay"
    if type(value) is int and value >= positive and value <= _FLOAT_MAX:
        return value                    # the common case, at once
    if phased and isinstance(value, tuple):
        if len(value) == 0:
            raise SDFError(f"{what} of channel '{channel.name}': an empty list of phases",
                           channel.origin, what)
        if _counts(value, positive):
            return value
        if all(_known(v) for v in value):
            return _as_count(value, what, channel, positive, phased)
        return Phases(_as_count(v, f"{what} (a phase)", channel, False) if _known(v) else v
                      for v in value)
    return _as_count(value, what, channel, positive, phased) if _known(value) else value


def _as_count(value, what, channel, positive, phased=False):
    """``value`` as an int; per phase (``phased``), a tuple of non-negative ints with a
    positive sum (a phase may move no token, a cycle must)."""
    if type(value) is int and value >= positive and value <= _FLOAT_MAX:
        return value                    # the common case, at once
    if phased and isinstance(value, tuple):
        if _counts(value, positive):
            return value
        counts = Phases(_as_count(v, f"{what} (a phase)", channel, False) for v in value)
        if positive and not sum(counts):
            raise SDFError(f"channel '{channel.name}': the phases of {what} sum to 0; a "
                           f"cycle of phases must move a token", channel.origin,
                           what.split()[0])
        return counts
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or \
            not _finite(value) or value != int(value) or value < (1 if positive else 0):
        need = "a positive integer" if positive else "a non-negative integer"
        raise SDFError(f"channel '{channel.name}': {what} must be {need} within the float "
                       f"range, got {_shown(value)}", channel.origin, what.split()[0])
    return int(value)


def _counts(value, positive) -> bool:
    """Whether ``value`` passes :func:`_as_count` as it is: ints per phase, non-negative,
    their sum within the float range (so each is) and positive where ``positive`` (at
    once, in C)."""
    return type(value) is Phases and set(map(type, value)) == _INT and min(value) >= 0 \
        and positive <= sum(value) <= _FLOAT_MAX
