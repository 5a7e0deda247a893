"""Fuzz cases of the importers (``fuzz.py --format sdf3|onnx|preesm``).

- ``sdf3``: SDF3 XML seeds (the example's graph, graphs with several processor types,
  cyclo-static ones, Kiter's initialisation phases) mutated as text and through their
  attributes (weird rates, times, token counts and sizes, ``;`` phases, names), imported
  with a random ``--processors`` (keep, ignore, renamings good and bad) or checked;
- ``onnx``: models built with ``onnx.helper`` (a CNN, a residual block, a transformer
  encoder block: the builders of ``tests/test_import_onnx.py``) mutated through their
  protobuf fields (dimensions, attributes, operator kinds, inputs) or their bytes
  (flips, truncation, insertion), imported;
- ``preesm``: the project of ``tests/test_import_preesm.py`` with one of its files
  (``.pi``, ``.slam``, ``.scenario``) mutated as the SDF3 seeds are, plus whole elements
  duplicated or deleted, elements' text, PREESM expressions and damaged encodings;
  imported with the architecture and the scenario, with the scenario only, or alone.

A case carries ``data`` (bytes) and ``suffix`` (the input's extension), or ``tree`` and
``name`` (a project and the file of it that the input replaces), for ``run_case``.
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


def mutate_xml(text: str, rng: random.Random, attribute=_ATTRIBUTE, weird=_WEIRD,
               tokens=_TOKENS, kinds=range(6)) -> str:
    """``text`` with one to three edits of ``kinds`` (drawn alike; repeat one to weigh
    it): an attribute's value (0-2: from ``weird`` or another attribute's), a token of
    ``tokens`` inserted (3), a span deleted or the text truncated (4), a line duplicated
    or deleted (5), a whole element (self-closing or to its end tag) duplicated or
    deleted (6), the text of an element replaced (7)."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.choice(kinds)
        if kind <= 2:                                   # an attribute's value
            matches = list(attribute.finditer(text))
            if matches:
                m = rng.choice(matches)
                value = rng.choice(weird + [x.group(2) for x in matches])
                text = text[:m.start(2)] + value + text[m.end(2):]
        elif kind == 3:                                 # a token anywhere
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(tokens) + text[i:]
        elif kind == 4 and text:                        # delete a span or truncate
            i = rng.randrange(len(text))
            text = text[:i] + (text[i + rng.randrange(1, 40):] if rng.random() < 0.8 else "")
        elif kind <= 5:                                 # duplicate or delete a line
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(i, lines[i])
            else:
                del lines[i]
            text = "\n".join(lines)
        elif kind == 6:                                 # duplicate or delete an element
            starts = list(_START_TAG.finditer(text))
            if starts:
                m = rng.choice(starts)
                end = m.end() if m.group(2) else text.find(f"</{m.group(1)}>", m.end())
                if end >= 0:
                    end = end if m.group(2) else end + len(m.group(1)) + 3
                    copy = text[m.start():end] if rng.random() < 0.5 else ""
                    text = text[:end] + copy + text[end:] if copy else \
                        text[:m.start()] + text[end:]
        else:                                           # an element's text
            matches = list(_TEXT.finditer(text))
            if matches:
                m = rng.choice(matches)
                value = rng.choice(weird + [x.group(1) for x in matches])
                text = text[:m.start(1)] + value + text[m.end(1):]
    return text


#: a start tag (group 2: self-closing); an element ends at the first end tag of its name
#: after it (none nest in the seeds)
_START_TAG = re.compile(r"<([\w:]+)(?:\s[^<>]*?)?(/?)>")
#: the text of an element without children
_TEXT = re.compile(r">([^<>\s][^<>]*)</")


def mutate_sdf3(text: str, rng: random.Random) -> str:
    return mutate_xml(text, rng)


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


# ----------------------------------------------------------------------------- preesm

#: the hand-written project of tests/test_import_preesm.py, copied into each case's
#: directory; one of its files is replaced by the mutated input
PREESM_TREE = "examples/preesm"
_PREESM_FILES = ["proj/Algo/top.pi", "proj/Algo/top.pi", "proj/Algo/sub.pi",
                 "proj/Archi/board.slam", "proj/Scenarios/board.scenario",
                 "proj/Scenarios/override.scenario"]
_PREESM_ATTRIBUTE = re.compile(
    r'(expr|id|kind|name|source|target|sourceport|targetport|type|level|setter|getter|'
    r'defaultValue|period|key|for|annotation|opname|vertexname|time|timingtype|setuptime|'
    r'timeperunit|size|value|parent|path|url|componentRef|busRef|componentType|speed|'
    r'directedLink|linkType|referenceId|refinement|library|vendor|version)="([^"]*)"')
_PREESM_WEIRD = _WEIRD + [
    # expressions (JEP: ^ is a power, functions of PREESM)
    "1/0", "N/0", "0/0", "N%0", "2^2000", "10^308*10", "-2^0.5", "(-8)^(1/3)", "N^N^N",
    "floor(", "max()", "min(1)", "min(1,2,3)", "geo_sum(1,2,1e9)", "geo_sum(2,2,-1)",
    "geo_sum(1e300,1e300,1e300)", "pow_div_max(2,0)", "pow_div_max(2,1e300)",
    "pow_div_max(1e300,1e300)", "sqrt(-1)", "ln(0)", "log(-1)", "exp(1e6)", "if(1,2)",
    "mod(N,0)", "rand()", "zz", "N*M*K", "len", "n/2", "N+", "((N)", "N)", "\"N\"",
    "1 " * 5 + "+ 1", "(" * 300 + "1" + ")" * 300, "-" * 300 + "1",
    " + ".join(["N"] * 500), "1e-320", "0.4999", "0.5", "2.5", "-0.5", "1e15", "1e16+1",
    # kinds, levels, names, files, types
    "actor", "param", "moldable_param", "cfg_in_iface", "cfg_out_iface", "src", "snk",
    "fork", "join", "broadcast", "roundbuffer", "init", "end", "delay", "fifo",
    "dependency", "input", "output", "cfg_input", "cfg_output", "permanent", "local",
    "none", "Src", "H", "Fk", "J", "Snk", "RB", "Snk2", "Init", "Fin", "D", "N", "M",
    "K", "F", "G", "in", "out", "top", "top/H", "top/H/F", "core", "dsp", "core0",
    "dsp0", "bus", "BUS", "Operator", "parallelComNode", "contentionComNode",
    "Communication", "undirected", "directed", "DataLink", "ControlLink", "uchar",
    "pixel", "void", "float", "char", "double", "Algo/sub.pi", "Algo/top.pi",
    "/proj/Algo/sub.pi", "Algo/none.pi", "../Algo/sub.pi", "/", "Algo", "EXECUTION_TIME",
    "INITIATION_INTERVAL", "8", "7", "24", "12"]
_PREESM_TOKENS = _TOKENS + [
    '<node id="zz" kind="actor"/>', '<node expr="1" id="zz" kind="param"/>',
    '<node id="zz" kind="cfg_out_iface"/>', '<edge kind="fifo" source="Src"/>',
    '<edge kind="dependency" source="zz" target="N"/>',
    '<port annotation="NONE" expr="1" kind="output" name="zz"/>',
    '<data key="graph_desc">Algo/top.pi</data>', '<data key="delay">D</data>',
    '<timing opname="core" time="1" vertexname="top/Snk"/>',
    '<parameter name="N" parent="top" value="0"/>',
    '<dataType name="float" size="0"/>', '<operator name="zz"/>', '<task name="top"/>',
    '<specialVertexOperator path="core0"/>', '<memcpyspeed opname="dsp" setuptime="-1" '
    'timeperunit="x"/>', '<spirit:componentInstance/>', '<spirit:interconnection/>',
    '<slam:componentDescription slam:componentRef="zz" slam:componentType="Operator"/>',
    "<![CDATA[x]]>", "<!DOCTYPE x>", "\t"]
#: edits that keep the XML well-formed weigh more (attributes, elements, text): the
#: others stop most inputs at the XML parser
_PREESM_KINDS = (0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 6, 6, 7, 7)
#: what can happen to a file's bytes
_ENCODINGS = ["utf-16", "utf-8-sig", "latin-1", "bogus", "ascii", "utf-32", "UTF-8"]


def damage_encoding(text: str, rng: random.Random) -> bytes:
    """``text`` as bytes, its encoding damaged: an invalid UTF-8 byte, a lone
    continuation byte or a NUL inserted, another encoding declared or used, a BOM."""
    data = text.encode("utf-8", "surrogatepass")
    kind = rng.randrange(4)
    if kind == 0 and data:                              # bad bytes
        i = rng.randrange(len(data))
        return data[:i] + rng.choice([b"\xff", b"\x80", b"\xc3", b"\x00", b"\xed\xa0\x80",
                                      b"\xef\xbb\xbf"]) + data[i:]
    name = rng.choice(_ENCODINGS)
    declared = re.sub(r'encoding="[^"]*"', f'encoding="{name}"', text, count=1)
    if kind == 1:                                       # another encoding declared
        return declared.encode("utf-8", "surrogatepass")
    if kind == 2:                                       # written in another encoding
        try:
            return (declared if rng.random() < 0.5 else text).encode(name)
        except (LookupError, UnicodeError):
            return data
    return rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00"]) + data


def make_preesm_cases(count: int, seed: int) -> list[dict]:
    """Cases of ``import preesm``: the test project copied, one of its files mutated (as
    XML text, expressions, elements, encoding), imported with and without the scenario
    and the architecture."""
    rng = random.Random(seed)
    root = ROOT / PREESM_TREE
    seeds = {name: (root / name).read_text(encoding="utf-8") for name in _PREESM_FILES}
    cases = []
    for i in range(count):
        name = rng.choice(_PREESM_FILES)
        text = seeds[name]
        if rng.random() < 0.9:
            text = mutate_xml(text, rng, _PREESM_ATTRIBUTE, _PREESM_WEIRD, _PREESM_TOKENS,
                              kinds=_PREESM_KINDS)
        data = damage_encoding(text, rng) if rng.random() < 0.1 else \
            text.encode("utf-8", "surrogatepass")
        scenario = "{dir}/proj/Scenarios/" + (
            name.rsplit("/", 1)[1] if name.endswith(".scenario") else
            rng.choice(["board.scenario", "override.scenario"]))
        argv = ["import", "preesm", "{dir}/proj/Algo/top.pi"]
        roll = rng.random()
        if name.endswith(".slam") or roll < 0.6:
            argv += ["--slam", "{dir}/proj/Archi/board.slam", "--scenario", scenario,
                     "-o", "{dir}/out/"]
        elif name.endswith(".scenario") or roll < 0.8:
            argv += ["--scenario", scenario] + (["-o", "{dir}/top.sdf"]
                                                if rng.random() < 0.5 else [])
        cases.append({"id": i, "fmt": "preesm", "tree": PREESM_TREE, "name": name,
                      "text": None, "data": data, "argv": argv, "line": None})
    return cases
