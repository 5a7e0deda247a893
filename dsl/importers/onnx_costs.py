"""The arithmetic of neural-network operators, by ONNX operator kind.

Each rule takes the operator's attributes and the shapes of its inputs and outputs (tuples
of whole numbers, from ONNX shape inference) and returns its multiply-accumulates
(``macs``) and floating-point operations (``flops``); :data:`OPERATOR_COSTS` maps an
ONNX ``op_type`` to its rule (one line per kind).  The counts are those of the direct
algorithm, as the layer tables of He et al. (2016, Table 1) and Simonyan & Zisserman
(2015) count them:

- Conv: ``N · M · ∏out · (C/g) · ∏k`` MACs (output channels ``M``, input channels ``C``,
  groups ``g``, kernel ``k``; strides, dilations and pads act through the output shape);
  ConvTranspose: ``N · C · ∏in · (M/g) · ∏k``; Gemm: ``M · N · K``; MatMul (batched,
  broadcast): ``∏out · K``.  ``flops = 2 · macs`` plus one add per output for a bias.
- pooling: one operation per window element per output (``∏out · ∏k``); global pooling
  one per input element.
- BatchNormalization (inference, folded to a scale and a shift): 2 per element;
  LayerNormalization: 7 per element (mean, centre, square, sum, normalise, scale,
  shift) plus 4 per normalised row (two divisions, a square root, a reciprocal);
  Softmax: 5 per element (max, subtract, exp, sum, divide); LRN (Krizhevsky et al.
  2012): ``2·size + 3`` per element (the sum of squares over ``size`` channels, then
  scale, power and divide).
- element-wise arithmetic and activations: 1 per output element (a transcendental
  function counts as one); reductions: 1 per input element.
- data movement (Reshape, Transpose, Concat, Slice, Gather, ...): no arithmetic.

An operator without a rule is not costed here; the importer names it in a warning.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable, Sequence

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Arithmetic:
    """Multiply-accumulates and floating-point operations of one operator run."""
    macs: int = 0
    flops: int = 0


#: ONNX op_type -> rule(attributes, input shapes, output shapes) -> Arithmetic or None
OPERATOR_COSTS: dict[str, Callable] = {}


def _rule(*kinds: str):
    def add(function):
        for kind in kinds:
            OPERATOR_COSTS[kind] = function
        return function
    return add


def _size(shape) -> int:
    return prod(shape) if shape is not None else 0


def _has(shapes: Sequence, i: int) -> bool:
    return len(shapes) > i and shapes[i] is not None


def _conv(x, w, y, bias: bool):
    if x is None or w is None or y is None or len(y) < 2 or len(w) < 2:
        return None
    macs = prod(y) * prod(w[1:])          # each output: (C/g) · ∏k products
    return Arithmetic(macs, 2 * macs + (prod(y) if bias else 0))


@_rule("Conv", "ConvInteger")
def conv(attrs, ins, outs):
    return _conv(ins[0], ins[1] if _has(ins, 1) else None, outs[0],
                 _has(ins, 2) and len(ins) == 3)


@_rule("QLinearConv")
def qlinear_conv(attrs, ins, outs):
    # x, its scale and zero point, w, its scale and zero point, y's, then the bias
    return _conv(ins[0], ins[3] if _has(ins, 3) else None, outs[0], _has(ins, 8))


@_rule("ConvTranspose")
def conv_transpose(attrs, ins, outs):
    x, w = ins[0], ins[1] if _has(ins, 1) else None
    if x is None or w is None or len(x) < 2 or len(w) < 2:
        return None
    # every input element is multiplied by the (M/g) · ∏k weights of its channel
    macs = prod(x) * prod(w[1:])
    bias = _size(outs[0]) if _has(ins, 2) and _has(outs, 0) else 0
    return Arithmetic(macs, 2 * macs + bias)


@_rule("Gemm")
def gemm(attrs, ins, outs):
    a, y = ins[0], outs[0]
    if a is None or y is None or len(a) != 2:
        return None
    k = a[0] if attrs.get("transA", 0) else a[1]
    macs = prod(y) * k
    bias = prod(y) if _has(ins, 2) else 0
    return Arithmetic(macs, 2 * macs + bias)


@_rule("MatMul", "MatMulInteger", "QLinearMatMul")
def matmul(attrs, ins, outs):
    a = ins[3] if len(ins) >= 8 else ins[0]      # QLinearMatMul: a, its scale and point
    y = outs[0]
    if a is None or y is None or not a:
        return None
    macs = _size(y) * a[-1]
    return Arithmetic(macs, 2 * macs)


@_rule("MaxPool", "AveragePool", "LpPool")
def pool(attrs, ins, outs):
    y, kernel = outs[0], attrs.get("kernel_shape")
    if y is None or not kernel:
        return None
    return Arithmetic(0, prod(y) * prod(kernel))


@_rule("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ReduceMean", "ReduceSum",
       "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
       "ReduceLogSumExp", "ArgMax", "ArgMin")
def reduction(attrs, ins, outs):
    return None if ins[0] is None else Arithmetic(0, prod(ins[0]))


@_rule("BatchNormalization", "InstanceNormalization")
def batch_norm(attrs, ins, outs):
    return None if ins[0] is None else Arithmetic(0, 2 * prod(ins[0]))


@_rule("LayerNormalization", "GroupNormalization", "RMSNormalization")
def layer_norm(attrs, ins, outs):
    x = ins[0]
    if x is None:
        return None
    axis = attrs.get("axis", -1)
    axis = axis + len(x) if axis < 0 else axis
    rows = prod(x[:axis]) if 0 <= axis <= len(x) else 1
    return Arithmetic(0, 7 * prod(x) + 4 * rows)


@_rule("LRN")
def lrn(attrs, ins, outs):
    # a sum of squares over ``size`` channels (2 per channel), then scale, power, divide
    return None if ins[0] is None else Arithmetic(0, (2 * attrs.get("size", 1) + 3)
                                                  * prod(ins[0]))


@_rule("Softmax", "LogSoftmax")
def softmax(attrs, ins, outs):
    return None if ins[0] is None else Arithmetic(0, 5 * prod(ins[0]))


@_rule("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "Relu", "LeakyRelu",
       "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu",
       "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Clip", "Softplus",
       "Softsign", "Mish", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign", "Mod",
       "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Where", "Not", "And",
       "Or", "Xor", "ThresholdedRelu", "Shrink", "QuantizeLinear", "DequantizeLinear")
def elementwise(attrs, ins, outs):
    return None if outs[0] is None else Arithmetic(0, prod(outs[0]))


@_rule("Reshape", "Flatten", "Transpose", "Concat", "Split", "Slice", "Gather",
       "GatherElements", "GatherND", "Squeeze", "Unsqueeze", "Identity", "Shape", "Size",
       "Constant", "ConstantOfShape", "Cast", "CastLike", "Pad", "Expand", "Tile", "Dropout",
       "DepthToSpace", "SpaceToDepth", "Range", "NonZero", "ScatterND", "ScatterElements",
       "Trilu", "EyeLike", "OneHot")
def movement(attrs, ins, outs):
    return Arithmetic(0, 0)
