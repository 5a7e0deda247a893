"""A PREESM scenario (``.scenario``): per-operator-type timings of actors, the memory
copy speed that times special actors, constraints (which operators may run which
actors), data type sizes and parameter values.

Timings are kept by the actor's path (``top/H/A``) and the operator *type* (an S-LAM
component).  Only execution times are read: another ``timingtype`` (an FPGA's
initiation interval) is refused by name.  Data type sizes are in bits when the scenario
carries ``<sizesAreInBit/>`` (PREESM's current files), in bytes otherwise (its older
ones)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from dsl.errors import ParseError
from dsl.importers.preesm.xml import children, read_xml

#: sizes in bits of C types PREESM knows without a scenario (its default type table)
DEFAULT_TYPE_BITS = {
    "char": 8, "unsigned char": 8, "short": 16, "unsigned short": 16, "int": 32,
    "unsigned int": 32, "long": 64, "unsigned long": 64, "long long": 64,
    "unsigned long long": 64, "float": 32, "double": 64, "long double": 128,
    **{f"{u}int{n}_t": n for u in ("", "u") for n in (8, 16, 32, 64)},
    **{f"{u}int_least{n}_t": n for u in ("", "u") for n in (8, 16, 32, 64)},
    **{f"{u}int_fast{n}_t": 8 if n == 8 else 64 for u in ("", "u") for n in (8, 16, 32, 64)},
    "intmax_t": 64, "uintmax_t": 64, "intptr_t": 64, "uintptr_t": 64,
}


class Allowed(list):
    """The operators a constraint lets run an actor, with where the first names it."""

    def __init__(self, path, origin):
        super().__init__()
        self.path, self.origin = path, origin

    @classmethod
    def of(cls, names, path, origin) -> "Allowed":
        allowed = cls(path, origin)
        allowed.extend(names)
        return allowed


@dataclass
class Scenario:
    path: str
    #: (actor path, operator type) -> (time expression, origin)
    timings: dict = field(default_factory=dict)
    #: operator type -> (setup time, time per token)
    memcpy: dict = field(default_factory=dict)
    #: actor path -> operator instance names that may run it (an :class:`Allowed`)
    constraints: dict = field(default_factory=dict)
    #: data type -> bits per token
    type_bits: dict = field(default_factory=dict)
    #: (graph path, parameter) -> (expression, origin)
    parameters: dict = field(default_factory=dict)
    #: operators that may run special actors (broadcast, fork, join, round buffer)
    special_operators: list = field(default_factory=list)
    special_origin: tuple | None = None
    algorithm: str | None = None
    architecture: str | None = None

    def type_bytes(self, dtype: str):
        """Bytes per token of ``dtype`` (scenario first, then PREESM's C type table),
        or None when neither knows it."""
        return _bytes(self.type_bits.get(dtype, DEFAULT_TYPE_BITS.get(dtype)))


def default_type_bytes(dtype: str):
    """Bytes per token of the C type ``dtype`` (PREESM's table), or None."""
    return _bytes(DEFAULT_TYPE_BITS.get(dtype))


def _bytes(bits):
    return None if bits is None else (bits // 8 if bits % 8 == 0 else bits / 8)


def read_scenario(path) -> Scenario:
    root, where = read_xml(path)
    if root.tag != "scenario":
        raise ParseError("not a PREESM scenario: the root element is not <scenario>",
                         where(root))
    sc = Scenario(str(path))
    in_bits = any(f.find("sizesAreInBit") is not None for f in children(root, "flags"))
    for files in children(root, "files"):
        for el in children(files, "algorithm"):
            sc.algorithm = el.get("url")
        for el in children(files, "architecture"):
            sc.architecture = el.get("url")
    for cons in children(root, "constraints"):
        for group in children(cons, "constraintGroup"):
            ops = [o.get("name") for o in children(group, "operator")]
            for el in children(group, "operator") + children(group, "task"):
                if not el.get("name"):
                    raise ParseError(f"<{el.tag}> of a constraint group without a name",
                                     where(el))
            for task in children(group, "task"):
                names = sc.constraints.setdefault(
                    task.get("name"), Allowed(path=task.get("name"), origin=where(task)))
                names.extend(op for op in ops if op not in names)
    for timings in children(root, "timings"):
        for el in children(timings, "timing"):
            ttype = el.get("timingtype") or "EXECUTION_TIME"
            if ttype != "EXECUTION_TIME":
                raise ParseError(f"timing of '{el.get('vertexname')}' on "
                                 f"'{el.get('opname')}': timingtype '{ttype}' is not an "
                                 "execution time; mapeval reads only EXECUTION_TIME",
                                 where(el))
            for attr in ("vertexname", "opname", "time"):
                if el.get(attr) is None:
                    raise ParseError(f"<timing> without {attr}", where(el))
            sc.timings[(el.get("vertexname"), el.get("opname"))] = (el.get("time"), where(el))
        for el in children(timings, "memcpyspeed"):
            try:
                speed = (float(el.get("setuptime")), float(el.get("timeperunit")))
            except (TypeError, ValueError):
                speed = (math.nan, math.nan)
            if not all(math.isfinite(x) and x >= 0 for x in speed):
                raise ParseError(f"memcpyspeed of '{el.get('opname')}': setuptime and "
                                 "timeperunit must be non-negative numbers", where(el))
            sc.memcpy[el.get("opname")] = speed
    for simu in children(root, "simuParams"):
        for ops in children(simu, "specialVertexOperators"):
            sc.special_origin = where(ops)
            for el in children(ops, "specialVertexOperator"):
                if not el.get("path"):
                    raise ParseError("<specialVertexOperator> without a path", where(el))
                if el.get("path") not in sc.special_operators:
                    sc.special_operators.append(el.get("path"))
        for types in children(simu, "dataTypes"):
            for el in children(types, "dataType"):
                size = el.get("size") or ""
                if not size.strip().isdigit() or int(size) == 0:
                    raise ParseError(f"data type '{el.get('name')}': size {size!r} is not "
                                     "a positive integer", where(el))
                size = int(size)
                sc.type_bits[el.get("name")] = size if in_bits else 8 * size
    for values in children(root, "parameterValues"):
        for el in children(values, "parameter"):
            sc.parameters[(el.get("parent"), el.get("name"))] = (el.get("value"), where(el))
    return sc
