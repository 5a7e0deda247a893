"""Write a small MobileNet-style CNN as an ONNX model (needs the onnx package).

224x224 RGB input; a 3x3/2 convolution, four depthwise-separable blocks (a depthwise 3x3
convolution, groups = channels, then a pointwise 1x1), global average pooling and a
1000-way classifier, as in MobileNet v1 (Howard et al. 2017, Table 1, its first layers).
The weights are random: only the shapes matter to mapeval.

usage: python make_cnn.py OUT.onnx
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
nodes, weights = [], []


def weight(name, *shape):
    weights.append(numpy_helper.from_array(
        rng.normal(0, 0.05, shape).astype(np.float32), name))
    return name


def conv(name, x, cin, cout, k, stride=1, groups=1):
    nodes.append(helper.make_node(
        "Conv", [x, weight(f"{name}_w", cout, cin // groups, k, k), weight(f"{name}_b", cout)],
        [f"{name}_y"], name=name, kernel_shape=[k, k], strides=[stride, stride],
        pads=[k // 2] * 4, group=groups))
    nodes.append(helper.make_node("Relu", [f"{name}_y"], [f"{name}_r"], name=f"{name}_relu"))
    return f"{name}_r"


y = conv("conv1", "image", 3, 32, 3, stride=2)                      # 112 x 112 x 32
for i, (cin, cout, stride) in enumerate([(32, 64, 1), (64, 128, 2), (128, 128, 1),
                                         (128, 256, 2)], start=2):
    y = conv(f"dw{i}", y, cin, cin, 3, stride=stride, groups=cin)   # depthwise
    y = conv(f"pw{i}", y, cin, cout, 1)                             # pointwise
nodes.append(helper.make_node("GlobalAveragePool", [y], ["pooled"], name="pool"))
nodes.append(helper.make_node("Flatten", ["pooled"], ["features"], name="flatten"))
nodes.append(helper.make_node("Gemm", ["features", weight("fc_w", 1000, 256),
                                       weight("fc_b", 1000)], ["logits"], name="fc",
                              transB=1))
nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax"))
graph = helper.make_graph(
    nodes, "cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                 ["batch", 3, 224, 224])],
    [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 1000])],
    weights)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(sys.argv[1], "wb") as out:
    out.write(model.SerializeToString())
