"""Fuzz cases of the importers (``fuzz.py --format sdf3|onnx``).

- ``sdf3``: SDF3 XML seeds (the example's graph, graphs with several processor types,
  cyclo-static ones, Kiter's initialisation phases) mutated as text and through their
  attributes (weird rates, times, token counts and sizes, ``;`` phases, names), imported
  with a random ``--processors`` (keep, ignore, renamings good and bad) or checked;
- ``onnx``: models built with ``onnx.helper`` (a CNN, a residual block, a transformer
  encoder block: the builders of ``tests/test_import_onnx.py``) mutated through their
  protobuf fields (dimensions, attributes, operator kinds, inputs) or their bytes
  (flips, truncation, insertion), imported.

A case carries ``data`` (bytes) and ``suffix`` (the input's extension) for ``run_case``.
"""
from __future__ import annotations

import importlib.util
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------- sdf3

_SDF3_SEEDS = [
    (ROOT / "examples" / "sdf3_lookup" / "audio.xml").read_text(encoding="utf-8"),
    """<?xml version="1.0"?>
<sdf3 type="sdf" version="1.0">
  <applicationGraph name="multi">
    <sdf name="multi" type="M">
      <actor name="x" type="X"><port name="o" type="out" rate="2"/></actor>
      <actor name="y" type="Y"><port name="i" type="in" rate="1"/>
        <port name="o" type="out" rate="1"/><port name="s" type="in" rate="1"/>
        <port name="t" type="out" rate="1"/></actor>
      <actor name="z" type="Z"><port name="i" type="in" rate="2"/></actor>
      <channel name="xy" srcActor="x" srcPort="o" dstActor="y" dstPort="i"/>
      <channel name="yz" srcActor="y" srcPort="o" dstActor="z" dstPort="i"/>
      <channel name="yy" srcActor="y" srcPort="t" dstActor="y" dstPort="s" initialTokens="1"/>
    </sdf>
    <sdfProperties>
      <actorProperties actor="x">
        <processor type="proc_0" default="true"><executionTime time="10"/></processor>
        <processor type="A15"><executionTime time="4"/></processor>
      </actorProperties>
      <actorProperties actor="y">
        <processor type="proc_0"><executionTime time="6"/></processor>
      </actorProperties>
      <actorProperties actor="z">
        <processor type="proc_1" default="true"><executionTime time="1.5"/></processor>
      </actorProperties>
      <channelProperties channel="xy"><tokenSize sz="8"/></channelProperties>
    </sdfProperties>
  </applicationGraph>
</sdf3>
""",
    """<?xml version="1.0"?>
<sdf3 type="csdf" version="1.0">
  <applicationGraph name="cs">
    <csdf name="cs" type="C">
      <actor name="a" type="A"><port name="o" type="out" rate="3,1"/>
        <port name="i" type="in" rate="1,1"/></actor>
      <actor name="b" type="B"><port name="i" type="in" rate="2*2"/>
        <port name="o" type="out" rate="2,1,1"/></actor>
      <channel name="ab" srcActor="a" srcPort="o" dstActor="b" dstPort="i"/>
      <channel name="ba" srcActor="b" srcPort="o" dstActor="a" dstPort="i"
               initialTokens="4"/>
    </csdf>
    <csdfProperties>
      <actorProperties actor="a">
        <processor type="proc_0" default="true"><executionTime time="2,3"/></processor>
      </actorProperties>
    </csdfProperties>
  </applicationGraph>
</sdf3>
""",
    """<?xml version="1.0"?>
<sdf3 type="csdf" version="1.0">
  <applicationGraph name="k">
    <csdf name="k" type="K">
      <actor name="src" type="S"><port name="o" type="out" rate="2"/></actor>
      <actor name="warm" type="W"><port name="i" type="in" rate="0;1,1"/></actor>
      <channel name="c" srcActor="src" srcPort="o" dstActor="warm" dstPort="i"/>
    </csdf>
    <csdfProperties>
      <actorProperties actor="warm">
        <processor type="p" default="true"><executionTime time="5;2,2"/></processor>
      </actorProperties>
    </csdfProperties>
  </applicationGraph>
</sdf3>
""",
]
_ATTRIBUTE = re.compile(r'(rate|time|initialTokens|sz|name|type|default|srcActor|dstActor|'
                        r'srcPort|dstPort|actor|channel)="([^"]*)"')
_WEIRD = ["0", "-1", "1e400", "nan", "inf", "1.5", "3;1", ";", "1;", ";1", "1,2;3",
          "1;2;3", "2*", "*3", "0*4", "-2*3", "1e9*1", "99999999999999999999", "", " ",
          "a", "1,,2", "1 , 2", "true", "TRUE", "proc 0", "é", "x\u0000", "1_000"]
_TOKENS = ["<", ">", "</actor>", "<actor name=\"q\">", "&amp;", "&bad;", "<!--", "\"",
           "<port name=\"p\" type=\"in\" rate=\"1\"/>", "<?xml version=\"1.0\"?>",
           "<processor type=\"proc_0\"/>", "xmlns=\"urn:x\" ", "\n"]
PROCESSORS = ["keep", "ignore", "map:proc_0=A15", "map:proc_0=A15,proc_1=A7",
              "map:proc_0=big", "map:proc_0=1x", "map:proc_0", "map:", "drop",
              "map:A15=proc_0,proc_0=A15", "map:p=q"]


def mutate_sdf3(text: str, rng: random.Random) -> str:
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.randrange(6)
        if kind <= 2:                                   # an attribute's value
            matches = list(_ATTRIBUTE.finditer(text))
            if matches:
                m = rng.choice(matches)
                value = rng.choice(_WEIRD + [x.group(2) for x in matches])
                text = text[:m.start(2)] + value + text[m.end(2):]
        elif kind == 3:                                 # a token anywhere
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(_TOKENS) + text[i:]
        elif kind == 4 and text:                        # delete a span or truncate
            i = rng.randrange(len(text))
            text = text[:i] + (text[i + rng.randrange(1, 40):] if rng.random() < 0.8 else "")
        else:                                           # duplicate or delete a line
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(i, lines[i])
            else:
                del lines[i]
            text = "\n".join(lines)
    return text


def make_sdf3_cases(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        text = rng.choice(_SDF3_SEEDS)
        if rng.random() < 0.9:
            text = mutate_sdf3(text, rng)
        if rng.random() < 0.15:
            argv = ["check", "{}"]
        else:
            good = rng.random() < 0.85
            argv = ["import", "sdf3", "{}", "--processors",
                    rng.choice(PROCESSORS[:5] if good else PROCESSORS)]
            if rng.random() < 0.3:
                argv += ["-o", "{dir}/out.sdf"]
        cases.append({"id": i, "fmt": "sdf3", "suffix": "xml", "text": text,
                      "argv": argv, "line": None})
    return cases


# ------------------------------------------------------------------------------- onnx

def _builders():
    spec = importlib.util.spec_from_file_location(
        "mapeval_onnx_models", ROOT / "tests" / "test_import_onnx.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mapeval_onnx_models", module)
    spec.loader.exec_module(module)
    return module


def onnx_seeds(directory: Path) -> list[bytes]:
    """Serialized seed models (written through ``directory``)."""
    models = _builders()
    paths = [models.small_cnn(directory / "cnn.onnx"),
             models.residual_block(directory / "res.onnx", c=8, hw=8),
             models.encoder_block(directory / "enc.onnx")]
    return [p.read_bytes() for p in paths]


_KINDS = ["Conv", "ConvTranspose", "Gemm", "MatMul", "Relu", "Add", "Softmax", "MaxPool",
          "AveragePool", "GlobalAveragePool", "BatchNormalization", "LayerNormalization",
          "Reshape", "Transpose", "Concat", "Flatten", "ConstantOfShape", "Shape", "Slice",
          "Gather", "Unknown", "Constant", "QLinearConv", "QLinearMatMul", "ReduceMean"]
_DIMS = [0, 1, 2, 3, 7, -1, -5, 10 ** 6, 10 ** 12, 2 ** 62, 2 ** 63 - 1]


def mutate_onnx(data: bytes, rng: random.Random) -> bytes:
    import onnx
    if rng.random() < 0.3:                              # the bytes
        data = bytearray(data)
        for _ in range(rng.choice((1, 2, 8))):
            kind = rng.randrange(3)
            i = rng.randrange(len(data)) if data else 0
            if kind == 0 and data:
                data[i] ^= 1 << rng.randrange(8)
            elif kind == 1:
                del data[i:]
            else:
                data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        return bytes(data)
    model = onnx.ModelProto.FromString(data)
    graph = model.graph
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.randrange(8)
        node = rng.choice(graph.node) if len(graph.node) else None
        if kind == 0 and graph.initializer:             # a weight's dimensions
            init = rng.choice(graph.initializer)
            if init.dims and rng.random() < 0.7:
                init.dims[rng.randrange(len(init.dims))] = rng.choice(_DIMS)
            else:
                init.dims.append(rng.choice(_DIMS))
        elif kind == 1 and node is not None and node.attribute:   # an attribute
            attr = rng.choice(node.attribute)
            if attr.ints:
                attr.ints[rng.randrange(len(attr.ints))] = rng.choice(_DIMS)
            elif attr.type == onnx.AttributeProto.INT:
                attr.i = rng.choice(_DIMS)
        elif kind == 2 and node is not None:            # another operator kind
            node.op_type = rng.choice(_KINDS)
        elif kind == 3 and node is not None and node.input:       # an input
            if rng.random() < 0.5:
                del node.input[rng.randrange(len(node.input))]
            else:
                node.input[rng.randrange(len(node.input))] = rng.choice(
                    ["", "nowhere", *(o for n in graph.node for o in n.output)])
        elif kind == 4 and graph.input:                 # the input's shape
            dims = graph.input[0].type.tensor_type.shape.dim
            if dims:
                d = dims[rng.randrange(len(dims))]
                if rng.random() < 0.3:
                    d.dim_param = rng.choice(["N", "batch", ""])
                else:
                    d.dim_value = rng.choice(_DIMS)
        elif kind == 5 and node is not None:            # a node removed or doubled
            if rng.random() < 0.5:
                graph.node.remove(node)
            else:
                graph.node.append(node)
        elif kind == 6 and node is not None:            # a name
            node.name = rng.choice(["", "x", "sdf", "actor", "a b", "1st", "é", "conv3"])
        elif kind == 7:                                 # the element type
            for v in [*graph.input, *graph.output]:
                if rng.random() < 0.5:
                    v.type.tensor_type.elem_type = rng.choice([0, 1, 2, 7, 8, 10, 16, 99])
    return model.SerializeToString()


def make_onnx_cases(count: int, seed: int) -> list[dict]:
    import tempfile
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as directory:
        seeds = onnx_seeds(Path(directory))
    cases = []
    for i in range(count):
        data = rng.choice(seeds)
        if rng.random() < 0.9:
            data = mutate_onnx(data, rng)
        argv = ["import", "onnx", "{}"]
        if rng.random() < 0.3:
            argv += ["-o", "{dir}/out.sdf"]
        cases.append({"id": i, "fmt": "onnx", "suffix": "onnx", "text": None, "data": data,
                      "argv": argv, "line": None})
    return cases
