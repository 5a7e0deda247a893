"""``mapeval import onnx`` (issue 40, item 2): multiply-accumulates equal to hand counts
for self-made models (a CNN with grouped, strided, dilated and asymmetric convolutions, a
residual block, a transformer encoder block), and to the published counts of ResNet-50
(He et al. 2016, Table 1) and VGG-19 (Simonyan & Zisserman 2015, Table 1) built here
from their layer tables; the batch as a parameter; bytes and channel sizes; warnings for
operators it cannot cost; errors naming the file."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import dsl  # noqa: E402
from dsl.errors import ParseError  # noqa: E402
from dsl.importers.onnx import import_onnx  # noqa: E402
from mapping.cli.main import main  # noqa: E402

F32 = TensorProto.FLOAT


class Net:
    """A graph under construction: weights are initializers whose data lives in an
    external file never written (the importer reads their shapes only), so that
    ResNet-50's 25 M weights cost nothing here."""

    def __init__(self, name, inputs):
        self.name, self.nodes, self.inits, self.n = name, [], [], 0
        self.inputs = [helper.make_tensor_value_info(n, F32, s) for n, s in inputs]

    def weight(self, shape, values=None):
        self.n += 1
        name = f"w{self.n}"
        if values is not None:      # a shape, axes or starts: int64 data
            self.inits.append(helper.make_tensor(name, TensorProto.INT64, shape, values))
            return name
        t = TensorProto(name=name, data_type=F32, dims=shape)
        t.data_location = TensorProto.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", "weights.bin"
        self.inits.append(t)
        return name

    def op(self, kind, inputs, **attrs):
        self.n += 1
        out = f"t{self.n}"
        self.nodes.append(helper.make_node(kind, inputs, [out], name=f"{kind.lower()}"
                                           f"{self.n}", **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, pad=None, groups=1, dilation=1, bias=True):
        k = (k, k) if isinstance(k, int) else k
        pads = pad if isinstance(pad, list) else [k[0] // 2, k[1] // 2] * 2 \
            if pad is None else [pad] * 4
        ins = [x, self.weight([cout, cin // groups, *k])]
        if bias:
            ins.append(self.weight([cout]))
        stride = stride if isinstance(stride, list) else [stride, stride]
        return self.op("Conv", ins, kernel_shape=list(k), strides=stride, pads=pads,
                       group=groups, dilations=[dilation, dilation])

    def save(self, path, output):
        graph = helper.make_graph(self.nodes, self.name, self.inputs,
                                  [helper.make_tensor_value_info(output, F32, None)],
                                  self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.example", 1)])
        path.write_bytes(model.SerializeToString())
        return path


def macs(graph) -> int:
    return sum(a.attrs["macs"] for a in graph.bind().actors.values())


def flops(graph, kind) -> int:
    return sum(a.attrs["flops"] for a in graph.bind().actors.values()
               if a.attrs["op"] == kind)


def small_cnn(path):
    net = Net("cnn", [("x", ["N", 3, 32, 32])])
    y = net.conv("x", 3, 16, 3, stride=2)                       # -> 16 x 16 x 16
    y = net.op("Relu", [y])
    y = net.conv(y, 16, 32, 3, groups=4, dilation=2, pad=2)     # -> 32 x 16 x 16
    y = net.op("Relu", [y])
    y = net.conv(y, 32, 8, (1, 3), stride=[1, 2], pad=[0, 1, 0, 1])   # -> 8 x 16 x 8
    y = net.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])    # -> 8 x 8 x 4
    y = net.op("GlobalAveragePool", [y])
    y = net.op("Flatten", [y])
    y = net.op("Gemm", [y, net.weight([10, 8]), net.weight([10])], transB=1)
    return net.save(path, y)


def test_cnn_hand_count(tmp_path):
    result = import_onnx(small_cnn(tmp_path / "cnn.onnx"))
    (graph,) = dsl.parse_sdf(result.text)
    hand = (16 * 16 * 16 * 3 * 3 * 3            # conv 3->16, 3x3, stride 2: 16x16 out
            + 32 * 16 * 16 * (16 // 4) * 3 * 3  # 4 groups, dilation 2, pad 2: 16x16 out
            + 8 * 16 * 8 * 32 * 1 * 3           # 1x3, strides (1, 2), pads (0, 1): 16x8
            + 8 * 10)                           # Gemm 8 -> 10
    assert macs(graph) == hand == 503_888
    assert flops(graph, "MaxPool") == 8 * 8 * 4 * 2 * 2
    assert result.warnings == ()
    assert graph.bind({"batch": 8}).actors["conv3"].attrs["macs"] == 8 * 110_592
    conv = graph.bind().actors["conv3"].attrs
    # bytes: the 3x3x3x16 weights and 16 biases, the 3x32x32 input, the 16x16x16 output
    assert conv["weight_bytes"] == 4 * (16 * 27 + 16)
    assert conv["in_bytes"] == 4 * 3 * 32 * 32 and conv["out_bytes"] == 4 * 16 * 16 * 16
    assert conv["bytes"] == conv["weight_bytes"] + conv["in_bytes"] + conv["out_bytes"]
    assert conv["flops"] == 2 * conv["macs"] + 16 * 16 * 16 and conv["ops"] == conv["flops"]
    channels = graph.bind({"batch": 4}).channels
    assert channels["t_t3"].size == 4 * 4 * 16 * 16 * 16


def residual_block(path, c=64, hw=56):
    net = Net("residual", [("x", [1, c, hw, hw])])
    y = net.conv("x", c, c, 3, bias=False)
    stats = [net.weight([c]) for _ in range(4)]
    y = net.op("BatchNormalization", [y, *stats])
    y = net.op("Relu", [y])
    y = net.conv(y, c, c, 3, bias=False)
    y = net.op("BatchNormalization", [y, *[net.weight([c]) for _ in range(4)]])
    y = net.op("Add", [y, "x"])
    return net.save(path, net.op("Relu", [y]))


def test_residual_block_hand_count(tmp_path):
    result = import_onnx(residual_block(tmp_path / "res.onnx"))
    (graph,) = dsl.parse_sdf(result.text)
    assert macs(graph) == 2 * 64 * 56 * 56 * 64 * 9
    assert flops(graph, "BatchNormalization") == 2 * 2 * 64 * 56 * 56
    assert flops(graph, "Add") == 64 * 56 * 56
    assert result.batch == 1


def encoder_block(path, s=16, d=64, heads=4, ffn=256):
    dk = d // heads
    net = Net("encoder", [("x", ["N", s, d])])
    split = net.weight([4], [0, s, heads, dk])
    q, k, v = (net.op("Transpose", [net.op("Reshape", [net.op("MatMul", ["x", net.weight(
        [d, d])]), split])], perm=perm) for perm in ([0, 2, 1, 3], [0, 2, 3, 1],
                                                     [0, 2, 1, 3]))
    scores = net.op("Softmax", [net.op("MatMul", [q, k])], axis=-1)   # N x h x s x s
    ctx = net.op("MatMul", [scores, v])                                # N x h x s x dk
    ctx = net.op("Reshape", [net.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                             net.weight([3], [0, s, d])])
    y = net.op("Add", [net.op("MatMul", [ctx, net.weight([d, d])]), "x"])
    y = net.op("LayerNormalization", [y, net.weight([d]), net.weight([d])], axis=-1)
    # the MLP: a Gemm on the rows, then a MatMul back, with a bias the graph builds
    rows = net.op("Reshape", [y, net.weight([2], [-1, d])])
    h = net.op("Relu", [net.op("Gemm", [rows, net.weight([ffn, d]), net.weight([ffn])],
                               transB=1)])
    shape = net.op("Concat", [net.op("Slice", [net.op("Shape", [y]), net.weight(
        [1], [0]), net.weight([1], [2])]), net.weight([1], [ffn])], axis=0)
    h = net.op("Reshape", [h, shape])                                  # N x s x ffn
    bias = net.op("ConstantOfShape", [net.weight([1], [d])],
                  value=helper.make_tensor("v", F32, [1], [0.1]))
    out = net.op("Add", [net.op("MatMul", [h, net.weight([ffn, d])]), bias])
    out = net.op("Add", [out, y])
    out = net.op("LayerNormalization", [out, net.weight([d]), net.weight([d])], axis=-1)
    return net.save(path, out)


def test_transformer_encoder_hand_count(tmp_path):
    result = import_onnx(encoder_block(tmp_path / "enc.onnx"))
    (graph,) = dsl.parse_sdf(result.text)
    s, d, h, dk, f = 16, 64, 4, 16, 256
    hand = (3 * s * d * d            # Q, K, V projections
            + 2 * h * s * s * dk     # Q K^T and the scores times V
            + s * d * d              # the output projection
            + 2 * s * d * f)         # the MLP: Gemm d -> f, MatMul f -> d
    assert macs(graph) == hand == 819_200
    assert flops(graph, "Softmax") == 5 * h * s * s
    assert flops(graph, "LayerNormalization") == 2 * (7 * s * d + 4 * s)
    assert result.warnings == ()
    bound = graph.bind({"batch": 3})
    assert sum(a.attrs["macs"] for a in bound.actors.values()) == 3 * hand
    # the bias the graph builds (ConstantOfShape of a stored shape) is a weight
    add = [a for a in bound.actors.values() if a.attrs["op"] == "Add"][1]
    assert add.attrs["weight_bytes"] == 4 * d and add.attrs["in_bytes"] == 4 * 3 * s * d
    assert not any(a.attrs["op"] == "ConstantOfShape" for a in bound.actors.values())


def resnet50(path, stride_on_3x3=True):
    """He et al. 2016, Table 1, 50-layer: conv1 7x7/2, 3x3 max pool /2, then bottleneck
    blocks [1x1, 3x3, 1x1] x (3, 4, 6, 3) of widths 64..512 (4x out), a projection
    shortcut opening each stage, global average pool, fc 1000."""
    net = Net("resnet50", [("x", [1, 3, 224, 224])])
    y = net.conv("x", 3, 64, 7, stride=2, bias=False)
    y = net.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (width, blocks) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3))):
        for b in range(blocks):
            stride = 2 if b == 0 and stage > 0 else 1
            z = net.conv(y, cin, width, 1, stride=1 if stride_on_3x3 else stride,
                         bias=False)
            z = net.conv(net.op("Relu", [z]), width, width, 3,
                         stride=stride if stride_on_3x3 else 1, bias=False)
            z = net.conv(net.op("Relu", [z]), width, 4 * width, 1, bias=False)
            short = net.conv(y, cin, 4 * width, 1, stride=stride, bias=False) \
                if b == 0 else y
            y = net.op("Relu", [net.op("Add", [z, short])])
            cin = 4 * width
    y = net.op("Flatten", [net.op("GlobalAveragePool", [y])])
    y = net.op("Gemm", [y, net.weight([1000, 2048]), net.weight([1000])], transB=1)
    return net.save(path, y)


def vgg19(path):
    """Simonyan & Zisserman 2015, Table 1, configuration E: 3x3 convolutions (pad 1) of
    64, 64 | 128, 128 | 256 x4 | 512 x4 | 512 x4 channels, a 2x2 max pool after each
    group, fc 4096, 4096, 1000."""
    net = Net("vgg19", [("x", [1, 3, 224, 224])])
    y, cin = "x", 3
    for width, count in ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4)):
        for _ in range(count):
            y, cin = net.op("Relu", [net.conv(y, cin, width, 3)]), width
        y = net.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = net.op("Flatten", [y])
    for n_in, n_out in ((512 * 7 * 7, 4096), (4096, 4096), (4096, 1000)):
        y = net.op("Gemm", [y, net.weight([n_out, n_in]), net.weight([n_out])], transB=1)
    return net.save(path, y)


@pytest.mark.parametrize("build, published", [
    # He et al. report 3.8e9 multiply-adds with the stride on the first 1x1 convolution;
    # frameworks put it on the 3x3 (e.g. torchvision's resnet50: 4.1e9)
    (lambda p: resnet50(p, stride_on_3x3=True), 4.1e9),
    (lambda p: resnet50(p, stride_on_3x3=False), 3.8e9),
    (vgg19, 19.6e9)], ids=["resnet50", "resnet50-v1", "vgg19"])
def test_published_networks(build, published, tmp_path):
    result = import_onnx(build(tmp_path / "net.onnx"))
    (graph,) = dsl.parse_sdf(result.text)
    assert macs(graph) == pytest.approx(published, rel=0.02)
    assert result.warnings == ()


def test_vgg19_weights_are_its_published_parameters(tmp_path):
    (graph,) = dsl.parse_sdf(import_onnx(vgg19(tmp_path / "vgg.onnx")).text)
    weights = sum(a.attrs["weight_bytes"] for a in graph.bind().actors.values()) / 4
    assert weights == pytest.approx(144e6, rel=0.01)     # Table 2: 144 M parameters


def test_uncostable_operator_is_named_with_what_was_assumed(tmp_path, capsys):
    net = Net("odd", [("x", [2, 8])])
    y = net.op("Relu", ["x"])
    net.nodes.append(helper.make_node("Hardmax", [y], ["z"], name="hm"))
    net.nodes.append(helper.make_node("Fancy", ["z"], ["q"], name="fancy",
                                      domain="com.example"))
    path = net.save(tmp_path / "odd.onnx", "q")
    result = import_onnx(path)
    assert len(result.warnings) == 2
    assert "graph.node[2] 'fancy' (Fancy): cannot cost it (no rule for operator 'Fancy' " \
        "of domain 'com.example'); assumed 0 macs and 0 flops" in result.warnings[1]
    out = tmp_path / "odd.sdf"
    assert main(["import", "onnx", str(path), "-o", str(out)]) == 0
    assert "warning: graph.node[1] 'hm' (Hardmax)" in capsys.readouterr().err
    (graph,) = dsl.load_sdf(out)
    assert graph.bind().actors["hm"].attrs["in_bytes"] == 2 * 8 * 4


def test_fixed_batch_is_the_parameter_default(tmp_path):
    result = import_onnx(residual_block(tmp_path / "r.onnx", c=8, hw=4))
    assert "param batch = 1" in result.text
    net = Net("b4", [("x", [4, 8])])
    path = net.save(tmp_path / "b4.onnx", net.op("Relu", ["x"]))
    (graph,) = dsl.parse_sdf(import_onnx(path).text)
    assert graph.bind().actors["relu1"].attrs["flops"] == 32


@pytest.mark.parametrize("data, message", [
    (b"", "no graph"), (b"\x08\x07garbage\xff\xff", "not an ONNX model"),
    (b"hello world", "not an ONNX model")])
def test_bad_files_exit_2(tmp_path, capsys, data, message):
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    with pytest.raises(ParseError, match=message):
        import_onnx(path)
    assert main(["import", "onnx", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_never_writes_over_its_input(tmp_path, capsys):
    path = small_cnn(tmp_path / "cnn.onnx")
    before = path.read_bytes()
    assert main(["import", "onnx", str(path), "-o", str(path)]) == 2
    assert path.read_bytes() == before
    assert main(["import", "onnx", str(path), "-o", str(tmp_path / "cnn.txt")]) == 2
    assert "refusing" in capsys.readouterr().err


def test_imported_graph_searches_on_a_roofline_soc(tmp_path, capsys):
    path = small_cnn(tmp_path / "cnn.onnx")
    sdf = tmp_path / "cnn.sdf"
    assert main(["import", "onnx", str(path), "-o", str(sdf)]) == 0
    moa = tmp_path / "soc.moa"
    moa.write_text("""moa soc {
    metric time [unit = "s"]
    cn dram [time = bandwidth(B = 1e10)]
    pe cpu [time = roofline(peak = 1e10, bandwidth = 1e10, memory = dram)]
    pe npu [time = roofline(peak = 1e12, bandwidth = 1e10, memory = dram)]
    cpu -- dram; npu -- dram
}""")
    assert main(["search", str(sdf), str(moa), "--aggregate", "max", "--json"]) == 0
    import json
    best = json.loads(capsys.readouterr().out)
    assert best["optimal"] and math.isfinite(best["value"]) and best["value"] > 0


def test_without_onnx_installed_says_how_to_install(tmp_path, capsys, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_onnx(name, *args, **kwargs):
        if name == "onnx" or name.startswith("onnx."):
            raise ImportError("No module named 'onnx'")
        return real(name, *args, **kwargs)

    path = small_cnn(tmp_path / "cnn.onnx")
    monkeypatch.setattr(builtins, "__import__", no_onnx)
    assert main(["import", "onnx", str(path)]) == 2
    assert "pip install 'mapeval[onnx]'" in capsys.readouterr().err


def test_numbers_are_whole(tmp_path):
    (graph,) = dsl.parse_sdf(import_onnx(small_cnn(tmp_path / "c.onnx")).text)
    for actor in graph.bind({"batch": 3}).actors.values():
        for q in ("macs", "flops", "bytes"):
            assert float(actor.attrs[q]).is_integer() and actor.attrs[q] >= 0
    assert np.isfinite(macs(graph))


def test_conv_transpose_hand_count(tmp_path):
    net = Net("up", [("x", [1, 8, 5, 5])])
    y = net.op("ConvTranspose", ["x", net.weight([8, 2, 3, 3]), net.weight([4])],
               kernel_shape=[3, 3], strides=[2, 2], group=2)
    (graph,) = dsl.parse_sdf(import_onnx(net.save(tmp_path / "up.onnx", y)).text)
    up = graph.bind().actors["convtranspose3"].attrs
    # every input element meets the (M/g) x 3 x 3 weights of its group: 8·5·5 · 2·9
    assert up["macs"] == 8 * 5 * 5 * 2 * 9
    out = 4 * 11 * 11                     # (5 - 1)·2 + 3 = 11
    assert up["out_bytes"] == 4 * out and up["flops"] == 2 * up["macs"] + out


def test_a_named_sequence_length_is_given_with_dim(tmp_path, capsys):
    net = Net("seq", [("x", ["N", "sequence", 64])])
    y = net.op("MatMul", ["x", net.weight([64, 32])])
    path = net.save(tmp_path / "seq.onnx", y)
    result = import_onnx(path)
    assert any("--dim sequence=N" in w for w in result.warnings)
    (graph,) = dsl.parse_sdf(import_onnx(path, dims={"sequence": 10}).text)
    assert graph.bind({"batch": 3}).actors["matmul2"].attrs["macs"] == 3 * 10 * 64 * 32
    out = tmp_path / "seq.sdf"
    assert main(["import", "onnx", str(path), "--dim", "sequence=10", "-o", str(out)]) == 0
    assert main(["import", "onnx", str(path), "--dim", "sequence=ten"]) == 2
    assert "expected NAME=N" in capsys.readouterr().err


LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


@pytest.mark.skipif(not LIGHT.is_dir(), reason="this onnx has no model-zoo test models")
@pytest.mark.parametrize("model, gmacs, mparams", [
    ("resnet50", 4.1, 25.6),          # He et al. 2016; parameters as torchvision counts
    ("vgg19", 19.6, 143.7),           # Simonyan & Zisserman 2015, Table 2: 144 M
    ("bvlc_alexnet", None, 61.0),     # Krizhevsky et al. 2012: 60 M parameters
    ("squeezenet", None, 1.24)])      # Iandola et al. 2016: SqueezeNet 1.2 M
def test_model_zoo_networks_shipped_with_onnx(model, gmacs, mparams, tmp_path):
    """The 'light' model-zoo networks of onnx's own test data (weights computed in the
    graph by ConstantOfShape, the batch baked into a Reshape) import with their
    published multiply-accumulates and parameters, and scale with the batch."""
    result = import_onnx(LIGHT / f"light_{model}.onnx")
    (graph,) = dsl.parse_sdf(result.text)
    actors = graph.bind().actors.values()
    if gmacs is not None:
        assert macs(graph) == pytest.approx(gmacs * 1e9, rel=0.02)
    params = sum(a.attrs["weight_bytes"] for a in actors) / 4
    assert params == pytest.approx(mparams * 1e6, rel=0.02)
    assert not any(a.attrs["op"] == "ConstantOfShape" for a in actors)
    assert sum(a.attrs["macs"] for a in graph.bind({"batch": 8}).actors.values()) == \
        8 * macs(graph)
    assert all("cannot cost" not in w for w in result.warnings)


def test_a_reshape_to_a_fixed_batch_is_read_as_keeping_it(tmp_path):
    net = Net("flat", [("x", [1, 4, 2, 2])])
    y = net.op("Reshape", ["x", net.weight([2], [1, 16])])
    y = net.op("Gemm", [y, net.weight([3, 16])], transB=1)
    result = import_onnx(net.save(tmp_path / "flat.onnx", y))
    assert any("1 Reshape(s) to a fixed batch of 1 read as keeping the batch" in w
               for w in result.warnings)
    (graph,) = dsl.parse_sdf(result.text)
    assert graph.bind({"batch": 5}).actors["gemm4"].attrs["macs"] == 5 * 16 * 3


def test_fuzz_finding_a_name_that_is_not_utf8(tmp_path, capsys):
    """Found by the fuzzer: protobuf hands a name with a byte that is not UTF-8 over as
    bytes, which reached the naming of actors (exit 1)."""
    net = Net("bytes", [("x", [1, 2])])
    net.op("Relu", ["x"])
    net.nodes[0].name = "r"
    data = net.save(tmp_path / "ok.onnx", "t1").read_bytes()
    i = data.index(b"\x1a\x01r")
    path = tmp_path / "bad.onnx"
    path.write_bytes(data[:i + 2] + b"\xff" + data[i + 3:])
    assert main(["import", "onnx", str(path)]) == 2
    assert "graph.node[0]: a name is not UTF-8 text" in capsys.readouterr().err
