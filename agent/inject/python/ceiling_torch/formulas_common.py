"""What every formula module shares: precisions, pointwise operation counts, argument helpers.

The conventions (DESIGN.md; formulas.py's docstring): a multiply-add counts 2, each other
arithmetic operation or elementary function 1, per element; bytes are compulsory, each
input read once and each output written once at its dtype's size.
"""
import re

import torch

# dtype -> the precision names of `{precision=...}` (agent/run/region.cpp). Integer and
# bool tensors have no roof of their own in the profile: their work is declared without a
# precision and judged against the default (fp32) roofs.
PRECISION = {
    torch.float32: "fp32",
    torch.float64: "fp64",
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.int8: "int8",
    torch.uint8: "int8",
}

# Operations per output element of pointwise ops (each arithmetic operation or elementary
# function call counts 1; a comparison-and-select counts 1).
OPS_PER_ELEMENT = {
    # arithmetic
    "add": 1, "sub": 1, "rsub": 1, "mul": 1, "div": 1, "neg": 1, "abs": 1, "remainder": 1,
    "fmod": 1, "maximum": 1, "minimum": 1, "pow": 1, "reciprocal": 1, "sqrt": 1, "rsqrt": 1,
    "exp": 1, "log": 1, "log2": 1, "log1p": 1, "expm1": 1, "sin": 1, "cos": 1, "tanh": 1,
    "erf": 1, "sign": 1, "floor": 1, "ceil": 1, "round": 1, "trunc": 1, "square": 1,
    "addcmul": 3, "addcdiv": 3, "lerp": 3, "where": 1, "masked_fill": 1, "clamp": 2,
    "clamp_min": 1, "clamp_max": 1, "bitwise_and": 1, "bitwise_or": 1, "bitwise_not": 1,
    "logical_not": 1, "logical_and": 1, "logical_or": 1,
    # comparisons (bool output)
    "eq": 1, "ne": 1, "lt": 1, "le": 1, "gt": 1, "ge": 1, "isnan": 1,
    # activations: relu max(x,0); hardtanh min(max(x,a),b); sigmoid 1/(1+exp(-x)) exp, add,
    # div; silu x*sigmoid; hardsigmoid relu6(x+3)/6; hardswish x*hardsigmoid; gelu (erf form)
    # 0.5*x*(1+erf(x/sqrt2)); softplus log(1+exp(x)); mish x*tanh(softplus(x))
    "relu": 1, "hardtanh": 2, "relu6": 2, "threshold": 1, "leaky_relu": 2, "prelu": 2,
    "elu": 4, "selu": 5, "celu": 4, "sigmoid": 3, "silu": 4, "hardsigmoid": 4,
    "hardswish": 5, "gelu": 5, "softplus": 3, "mish": 5, "glu": 4, "native_dropout": 2,
    # activation gradients: grad_output masked or scaled by the saved input or output
    "threshold_backward": 1, "hardtanh_backward": 2, "leaky_relu_backward": 2,
    "sigmoid_backward": 3, "tanh_backward": 3, "silu_backward": 6, "gelu_backward": 8,
    "hardswish_backward": 4, "hardsigmoid_backward": 2, "elu_backward": 3,
    # dropout's gradient: grad_output times the kept mask times 1/(1-p)
    "native_dropout_backward": 2,
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "isnan"}
ACTIVATIONS = {"relu", "hardtanh", "relu6", "threshold", "leaky_relu", "prelu", "elu", "selu",
               "celu", "sigmoid", "silu", "hardsigmoid", "hardswish", "gelu", "softplus",
               "mish", "glu", "tanh"}
ACTIVATION_GRADIENTS = {n for n in OPS_PER_ELEMENT
                        if n.endswith("_backward") and n != "native_dropout_backward"}
# add(x, y, alpha=a) and sub compute x + a*y: a multiply-add where alpha is not 1 (Adam's
# exp_avg.add_(grad, alpha=1 - beta1) on torch 1.13, SGD's param.add_(grad, alpha=-lr)).
SCALED_BY_ALPHA = {"add", "sub", "rsub"}
# Interpolation: taps per output element (each tap a multiply-add, 2 ops); nearest copies.
# Bilinear's 4 taps give 8 ops per output, the convention ceiling's CPU and GPU suites count a
# resize by too (bilinear_ops_per_output, kernels/registry.hpp).
UPSAMPLE_TAPS = {"upsample_nearest1d": 0, "upsample_nearest2d": 0, "upsample_nearest3d": 0,
                 "_upsample_nearest_exact1d": 0, "_upsample_nearest_exact2d": 0,
                 "_upsample_nearest_exact3d": 0, "upsample_linear1d": 2,
                 "upsample_bilinear2d": 4, "upsample_trilinear3d": 8, "upsample_bicubic2d": 16}


class _Call:
    """One call: its op's base name, whether in place, its arguments, and the names of its
    schema's arguments (`get` finds an argument by name wherever this torch version puts it:
    the attention ops moved theirs between 1.13 and 2.x)."""
    __slots__ = ("base", "inplace", "args", "kwargs", "names")

    def __init__(self, base, inplace, args, kwargs, names=()):
        self.base, self.inplace, self.args, self.kwargs = base, inplace, args, kwargs
        self.names = names

    def get(self, name, default=None):
        if name in self.kwargs:
            return self.kwargs[name]
        if name in self.names:
            i = self.names.index(name)
            if i < len(self.args):
                return self.args[i]
        return default


def _alpha_ops(c):
    """1 per element where add/sub scales its second operand by an alpha other than 1."""
    alpha = c.kwargs.get("alpha", 1)
    return 1 if c.base.rpartition("_foreach_")[2] in SCALED_BY_ALPHA and alpha != 1 else 0


def _item_size(dtype):
    return torch.empty((), dtype=dtype).element_size()


def _is_tensor(a):
    return isinstance(a, torch.Tensor)


def _values(ts):
    """The first tensor that is not a bool mask or condition: whose dtype an op's output and
    precision follow (where's condition comes first)."""
    return next((t for t in ts if t.dtype != torch.bool), ts[0])


def _nbytes(t):
    return t.numel() * t.element_size()


def _tensors(args, kwargs):
    """Tensor inputs, lists of tensors flattened; `out=` excluded (it is the output)."""
    found = []
    for a in list(args) + [v for k, v in kwargs.items() if k != "out"]:
        if _is_tensor(a):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(x for x in a if _is_tensor(x))
    return found


def _arg(args, kwargs, index, name, default=None):
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _spatial_dims(base):
    """1, 2 or 3 from an op name such as max_pool2d_with_indices or upsample_bilinear2d."""
    return int(re.search(r"([123])d", base).group(1))


def _as_list(v, n):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    return v * n if len(v) == 1 else v

