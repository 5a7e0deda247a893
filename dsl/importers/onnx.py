"""ONNX models as single-rate SDF graphs (needs the optional ``onnx`` package:
``pip install 'mapeval[onnx]'``).

One actor per operator (an operator on weights only, as ``Constant`` or
``ConstantOfShape`` of a stored shape, is folded: its outputs are weights), one channel per
tensor an operator passes to another, every rate 1 (one iteration = one inference of a
batch).  An actor carries its operator kind (``op``), its arithmetic from
:mod:`dsl.importers.onnx_costs` (``macs``, ``flops``, and ``ops = flops`` for the
roofline model) and its bytes: ``weight_bytes`` (initializers and constants it reads),
``in_bytes`` (activations it reads), ``out_bytes`` (what it writes) and ``bytes``, their
sum (the roofline's traffic).  A channel's ``size`` is its tensor's bytes (element size
of its type times its elements).

Shapes come from ONNX shape inference (``onnx.shape_inference.infer_shapes`` with data
propagation, which folds ``Shape``, ``Gather``, ``Concat`` into ``Reshape`` and
``ConstantOfShape`` shapes, so that weights a graph computes itself get theirs).  The
batch is the first dimension of the graph's inputs: the graph gets ``param batch = N``
(the model's own batch, 1 when it leaves it symbolic), and every quantity is inferred at
batch 1 and 2 and written ``a * batch + b``, exact for a network whose work is linear in
its batch.  A model whose shapes do not follow its inputs' batch (a ``Reshape`` to a
stored target with a leading 1, as exporters write a flatten) is read again with those
reshapes keeping the batch (target ``0, ...``), said in a warning; failing that, it keeps
the numbers of its own batch, with a warning.

An operator without a rule in :data:`~dsl.importers.onnx_costs.OPERATOR_COSTS`, or
whose shapes inference left unknown, is named in a warning, with what was assumed (zero
``macs`` and ``flops``, the bytes of its known tensors).  Errors name the element of the
protobuf (``graph.node[3] 'conv1' (Conv)``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dsl.diagnostics import format_diagnostic
from dsl.errors import ParseError
from dsl.files import read_bytes
from dsl.importers import Imported, Importer, output_option
from dsl.importers.onnx_costs import OPERATOR_COSTS
from dsl.importers.profile import identifier_names
from dsl.names import identifier, unique

INSTALL = "reading ONNX models needs the onnx package: pip install 'mapeval[onnx]' " \
    "(or pip install onnx)"
#: what an actor carries, in the order written
QUANTITIES = ("macs", "flops", "ops", "weight_bytes", "in_bytes", "out_bytes", "bytes")


@dataclass(frozen=True)
class ONNXImport:
    """The ``.sdf`` ``text`` of a model, its ``warnings`` and its ``batch``."""
    text: str
    warnings: tuple[str, ...]
    batch: int

    @property
    def graph(self):
        """The SDF graph (bound to its batch parameter's default)."""
        from dsl.parser import parse_sdf
        return parse_sdf(self.text, "<onnx>")[0]


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ParseError(INSTALL) from None
    return onnx


def load_model(path):
    """The :class:`onnx.ModelProto` of the file ``path``."""
    onnx = _onnx()
    data = read_bytes(path)
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:        # protobuf's DecodeError and its kin
        raise ParseError(f"'{path}': not an ONNX model: {_first_line(exc)}") from None
    if not model.HasField("graph"):
        raise ParseError(f"'{path}': not an ONNX model: no graph")
    _check_text(model.graph, path)
    return model


def _check_text(graph, path) -> None:
    """Refuse names that are not UTF-8 (protobuf hands them over as bytes)."""
    values = [("graph", graph.name)]
    for kind in ("input", "output", "initializer", "value_info"):
        values += [(f"graph.{kind}[{i}]", v.name) for i, v in enumerate(getattr(graph, kind))]
    for i, node in enumerate(graph.node):
        values += [(f"graph.node[{i}]", x) for x in (node.name, node.op_type, node.domain,
                                                      *node.input, *node.output)]
    for where, value in values:
        if not isinstance(value, str):
            raise ParseError(f"'{path}': {where}: a name is not UTF-8 text: {value!r:.60}")


def _first_line(exc) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _element(graph, i: int) -> str:
    node = graph.node[i]
    name = f" '{node.name}'" if node.name else ""
    return f"graph.node[{i}]{name} ({node.op_type})"


def _batch_inputs(graph) -> list:
    inits = {t.name for t in graph.initializer}
    return [v for v in graph.input if v.name not in inits
            and v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")
            and len(v.type.tensor_type.shape.dim) >= 1]


def _own_batch(graph) -> int:
    """The model's batch: the first dimension of its inputs if they fix one, else 1."""
    values = {d.dim_value for v in _batch_inputs(graph)
              for d in v.type.tensor_type.shape.dim[:1] if d.HasField("dim_value")}
    return values.pop() if len(values) == 1 and min(values | {1}) >= 1 else 1


#: initializers of more elements than this lose their data before shape inference (it
#: reads the values of small ones only: shapes, axes, indices)
_KEEP_VALUES = 4096


def _light(model):
    """A copy of ``model`` without the data of its large initializers."""
    onnx = _onnx()
    light = onnx.ModelProto()
    light.CopyFrom(model)
    for init in light.graph.initializer:
        n = 1
        for d in init.dims:
            n *= max(d, 0)
        if n > _KEEP_VALUES:
            for field in ("raw_data", "float_data", "int32_data", "int64_data",
                          "double_data", "uint64_data", "string_data"):
                init.ClearField(field)
    return light


def _infer(model, batch: int, path, dims=None):
    """The tensors' ``(shape or None, element bytes)`` after shape inference with the
    inputs' first dimension set to ``batch`` and their other named dimensions to
    ``dims`` (name -> size)."""
    onnx = _onnx()
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for value in _batch_inputs(model.graph):
        for k, dim in enumerate(value.type.tensor_type.shape.dim):
            if k == 0:
                dim.Clear()
                dim.dim_value = batch
            elif dim.HasField("dim_param") and dim.dim_param in (dims or {}):
                size = dims[dim.dim_param]
                dim.Clear()
                dim.dim_value = size
    # shapes recorded at the model's own batch would contradict the inferred ones
    del model.graph.value_info[:]
    for value in model.graph.output:
        if value.type.HasField("tensor_type"):
            value.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False,
                                                     data_prop=True)
    except Exception as exc:
        raise ParseError(f"'{path}': ONNX shape inference failed: {_first_line(exc)}") \
            from None
    graph = inferred.graph
    tensors = {}
    for value in [*graph.input, *graph.value_info, *graph.output]:
        tensors[value.name] = _tensor_type(value.type)
    for init in graph.initializer:
        tensors[init.name] = (tuple(init.dims), _itemsize(init.data_type))
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            shape = _constant_shape(node)
            if shape is not None:
                tensors[node.output[0]] = shape
    return tensors


def _itemsize(elem_type: int) -> int:
    from onnx import helper
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type).itemsize
    except Exception:           # undefined, string or an unknown type: no byte count
        return 0


def _tensor_type(type_proto):
    if not type_proto.HasField("tensor_type"):
        return (None, 0)
    tt = type_proto.tensor_type
    size = _itemsize(tt.elem_type)
    if not tt.HasField("shape"):
        return (None, size)
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value") or d.dim_value < 0:
            return (None, size)
        dims.append(d.dim_value)
    return (tuple(dims), size)


def _constant_shape(node):
    for attr in node.attribute:
        if attr.name == "value" and attr.HasField("t"):
            return (tuple(attr.t.dims), _itemsize(attr.t.data_type))
        if attr.name in ("value_float", "value_int"):
            return ((), 4 if attr.name == "value_float" else 8)
        if attr.name in ("value_floats", "value_ints"):
            return ((len(attr.floats) or len(attr.ints),), 4 if "float" in attr.name else 8)
    return None


def _attributes(node) -> dict:
    from onnx import helper
    out = {}
    for attr in node.attribute:
        try:
            out[attr.name] = helper.get_attribute_value(attr)
        except Exception:
            continue
    return out


def _bytes(tensor) -> int | None:
    shape, size = tensor
    if shape is None:
        return None
    n = 1
    for d in shape:
        n *= d
    return n * size


def folded(graph) -> tuple[set[str], set[int]]:
    """The weights (initializers, and the outputs of operators on weights only, as
    ``Constant`` and ``ConstantOfShape`` of a stored shape: computed once when the model
    is loaded, not per inference) and the indices of those operators."""
    weights = {t.name for t in graph.initializer}
    nodes = set()
    for i, node in enumerate(graph.node):
        if node.op_type.startswith("Random") or node.op_type in ("If", "Loop", "Scan"):
            continue
        if all(n in weights for n in node.input if n):
            weights.update(o for o in node.output if o)
            nodes.add(i)
    return weights, nodes


def _costs(graph, tensors, weights: set[str], skip: set[int]):
    """Per node: the quantities of :data:`QUANTITIES` (None where not known) and the
    reason it could not be costed (None when it could); None for the nodes ``skip``."""
    rows = []
    for i, node in enumerate(graph.node):
        if i in skip:
            rows.append(None)
            continue
        ins = [tensors.get(n, (None, 0)) if n else (None, 0) for n in node.input]
        outs = [tensors.get(n, (None, 0)) if n else (None, 0) for n in node.output]
        rule = OPERATOR_COSTS.get(node.op_type) if not node.domain or \
            node.domain in ("ai.onnx", "") else None
        arithmetic, why = None, None
        if rule is None:
            why = f"no rule for operator '{node.op_type}'" + \
                (f" of domain '{node.domain}'" if node.domain else "")
        else:
            try:
                arithmetic = rule(_attributes(node), [s for s, _ in ins] or [None],
                                  [s for s, _ in outs] or [None])
            except (TypeError, ValueError, IndexError, OverflowError):
                arithmetic = None
            if arithmetic is None:
                why = "shape inference left its shapes unknown"
        weight = in_ = out = 0
        for name, t in zip(node.input, ins):
            b = _bytes(t) or 0
            if name in weights:
                weight += b
            elif name:
                in_ += b
        for name, t in zip(node.output, outs):
            out += _bytes(t) or 0
        macs = arithmetic.macs if arithmetic else 0
        flops = arithmetic.flops if arithmetic else 0
        rows.append(({"macs": macs, "flops": flops, "ops": flops, "weight_bytes": weight,
                      "in_bytes": in_, "out_bytes": out,
                      "bytes": weight + in_ + out}, why))
    return rows


def _scales(graph, tensors2, one, two) -> bool:
    """Whether the quantities at batch 2 (``two``, shapes ``tensors2``) follow those at
    batch 1 (``one``): the same operators costed, none smaller, no reshape losing
    elements."""
    return _reshapes_keep_elements(graph, tensors2) and \
        all(a is None or b is not None and (a[1] is None) == (b[1] is None) and
            all(b[0][q] >= a[0][q] for q in QUANTITIES) for a, b in zip(one, two))


def _keeping_batch(model, own: int):
    """A copy of ``model`` whose ``Reshape`` targets stored with a first dimension equal
    to the batch ``own`` copy it from their input instead (0), and how many changed:
    exporters bake the batch into the shapes of a flatten."""
    onnx = _onnx()
    from onnx import numpy_helper
    model = onnx.ModelProto.FromString(model.SerializeToString())
    inits = {t.name: t for t in model.graph.initializer}
    targets = {n.input[1] for n in model.graph.node
               if n.op_type == "Reshape" and len(n.input) > 1 and n.input[1] in inits and
               not any(a.name == "allowzero" and a.i for a in n.attribute)}
    count = 0
    for name in sorted(targets):
        try:
            shape = numpy_helper.to_array(inits[name]).copy()
        except Exception:
            continue
        if shape.ndim == 1 and shape.size > 1 and shape[0] == own:
            shape[0] = 0
            inits[name].CopyFrom(numpy_helper.from_array(shape, name))
            count += 1
    return model, count


def _reshapes_keep_elements(graph, tensors) -> bool:
    """Whether every ``Reshape`` keeps its elements (shape inference does not check it:
    a model reshaping to a fixed leading 1 breaks it at another batch)."""
    for node in graph.node:
        if node.op_type == "Reshape" and len(node.input) and len(node.output):
            a, b = (_bytes(tensors.get(n, (None, 0))) for n in (node.input[0], node.output[0]))
            if a is not None and b is not None and a != b:
                return False
    return True


def _linear(q1: int, q2: int) -> str:
    """``q(batch)`` through ``q(1) = q1`` and ``q(2) = q2``."""
    slope, intercept = q2 - q1, 2 * q1 - q2
    if slope == 0:
        return str(q1)
    term = "batch" if slope == 1 else f"{slope} * batch"
    return term if intercept == 0 else f"{term} {'+' if intercept > 0 else '-'} " \
        f"{abs(intercept)}"


def symbolic_dims(graph) -> list[str]:
    """The named dimensions of the graph's inputs other than their first (the batch)."""
    return list(dict.fromkeys(d.dim_param for v in _batch_inputs(graph)
                              for d in v.type.tensor_type.shape.dim[1:]
                              if d.HasField("dim_param") and d.dim_param))


def import_onnx(path, name: str | None = None, dims=None) -> ONNXImport:
    """The single-rate ``.sdf`` text of the ONNX model at ``path`` (see module doc);
    ``dims`` gives the inputs' named dimensions other than the batch a size
    (``{"sequence": 128}``)."""
    model = _light(load_model(path))
    graph = model.graph
    if len(graph.node) == 0:
        raise ParseError(f"'{path}': the ONNX graph has no operators")
    own = _own_batch(graph)
    weights, constant = folded(graph)
    dims = dict(dims or {})
    warnings = [f"'{path}': the inputs' dimension '{d}' has no size; give it one with "
                f"--dim {d}=N (the operators that depend on it are not costed)"
                for d in symbolic_dims(graph) if d not in dims]
    sizes = (_infer(model, 1, path, dims), _infer(model, 2, path, dims))
    one, two = (_costs(graph, tensors, weights, constant) for tensors in sizes)
    if not _scales(graph, sizes[1], one, two):
        patched, count = _keeping_batch(model, own)
        if count:
            sizes = (_infer(patched, 1, path, dims), _infer(patched, 2, path, dims))
            one, two = (_costs(graph, tensors, weights, constant) for tensors in sizes)
            if _scales(graph, sizes[1], one, two):
                warnings.append(f"'{path}': {count} Reshape(s) to a fixed batch of {own} "
                                "read as keeping the batch (first dimension 0)")
    if not _scales(graph, sizes[1], one, two):
        sizes = (_infer(model, own, path, dims),) * 2
        one = two = _costs(graph, sizes[0], weights, constant)
        warnings.append(f"'{path}': the shapes do not follow the inputs' batch (a fixed "
                        f"reshape?); the quantities are those of batch {own}")
    title = name or graph.name or Path(str(path)).stem
    names = identifier_names(n.name or f"{n.op_type.lower()}_{i}"
                             for i, n in enumerate(graph.node))
    actor_of = {}
    lines = [f"# Imported by 'mapeval import onnx' from {path}: one actor per operator,",
             "# macs and flops (ops = flops) per inference of a batch, bytes = weight_bytes",
             "# + in_bytes + out_bytes; channels: size = the tensor's bytes.",
             f"sdf {identifier(title)} {{", f"    param batch = {own}"]
    producer = {}
    for i, node in enumerate(graph.node):
        if one[i] is None:
            continue
        actor = unique(names[node.name or f"{node.op_type.lower()}_{i}"],
                       actor_of.values())
        actor_of[i] = actor
        for out in node.output:
            if out:
                producer[out] = i
        values, why = one[i]
        if why is not None:
            warnings.append(f"{_element(graph, i)}: cannot cost it ({why}); assumed 0 macs "
                            "and 0 flops, bytes counted from its known tensors")
        attrs = [f'op = "{re.sub(chr(34), "", node.op_type)}"'] + \
            [f"{q} = {_linear(values[q], two[i][0][q])}" for q in QUANTITIES]
        lines.append(f"    actor {actor} [{', '.join(attrs)}]")
    channel_names = set()
    for i, node in enumerate(graph.node):
        if i not in actor_of:
            continue
        for tensor in node.input:
            j = producer.get(tensor)
            if j is None or j not in actor_of:
                continue
            b1, b2 = (_bytes(s.get(tensor, (None, 0))) for s in sizes)
            cname = unique(identifier(f"t_{tensor}"), channel_names)
            channel_names.add(cname)
            size = f", size = {_linear(b1, b2)}" if b1 is not None and b2 is not None else ""
            delay = ", delay = 1" if j >= i else ""
            lines.append(f"    channel {cname} : {actor_of[j]} -> {actor_of[i]} "
                         f"[prod = 1, cons = 1{delay}{size}]")
    lines.append("}")
    return ONNXImport("\n".join(lines) + "\n", tuple(warnings), own)


# --------------------------------------------------------------------------- mapeval import

HELP = """\
FILE.onnx is an ONNX model (opset 7 or later). The .sdf graph is single-rate, one
iteration = one inference of a batch: an actor per operator with op, macs, flops,
ops (= flops), weight_bytes, in_bytes, out_bytes and bytes (their sum), a channel per
tensor passed between operators with size = its bytes; param batch (the model's own
batch, else 1) scales every quantity that grows with the batch. Shapes come from ONNX
shape inference; --dim gives other named input dimensions (a sequence length) a size.
An operator it cannot cost is named in a warning (0 flops assumed).

example: mapeval import onnx cnn.onnx -o cnn.sdf
"""


def arguments(p) -> None:
    p.add_argument("path", metavar="FILE.onnx")
    output_option(p)
    p.add_argument("--name", help="name of the graph (default: the model's graph name)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="the size of a named input dimension other than the batch, e.g. "
                   "--dim sequence=128 (repeatable)")


def parse_dims(items) -> dict[str, int]:
    """``--dim NAME=N`` options as a dict."""
    dims = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not re.fullmatch(r"\s*\d+\s*", value) or \
                int(value) < 1:
            raise ParseError(f"--dim {item}: expected NAME=N with N a positive whole number")
        dims[name.strip()] = int(value)
    return dims


def convert(args) -> Imported:
    result = import_onnx(args.path, args.name, parse_dims(args.dim))
    from dsl.parser import parse_sdf
    (graph,) = parse_sdf(result.text, str(args.path))
    return Imported(result.text, inputs=(Path(args.path),),
                    messages=tuple(format_diagnostic(w, program="mapeval import onnx",
                                                     severity="warning")
                                   for w in result.warnings),
                    note=f"graph '{graph.name}', {len(graph.actors)} actors, "
                    f"{len(graph.channels)} channels, batch {result.batch}")


IMPORTER = Importer(arguments, convert, "Read an ONNX model into a single-rate SDF graph "
                    "whose actors carry each operator's arithmetic and bytes.", HELP)
