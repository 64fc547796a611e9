"""The work of one ATen operator call, from its arguments' shapes, dtypes and parameters.

`describe(func, args, kwargs)` gives the NVTX message of the call's range:

    aten.convolution [conv depthwise] {ops=5419008 bytes=2408704 working_set=2408704 written=1204224 precision=fp32}
    torchvision.nms [no formula]

Operations follow DESIGN.md: one multiply-add counts 2; elementwise and normalising work
counts each arithmetic operation or elementary function (exp, erf, sqrt) as 1, per element,
from the OPS_PER_ELEMENT numbers below. Bytes are compulsory: each input tensor read once,
each output written once (an in-place op reads and writes its tensor); `written` is the
outputs' share of them. The output's shape
comes from the same arguments (the range's message is needed before the op runs); its dtype
is the first input's, bool for comparisons. An op missing from TABLE, or one whose work
depends on the data (nms), is "[no formula]": listed, never counted as 0.
"""
import math
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
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "isnan"}
ACTIVATIONS = {"relu", "hardtanh", "relu6", "threshold", "leaky_relu", "prelu", "elu", "selu",
               "celu", "sigmoid", "silu", "hardsigmoid", "hardswish", "gelu", "softplus",
               "mish", "glu", "tanh"}
ACTIVATION_GRADIENTS = {n for n in OPS_PER_ELEMENT if n.endswith("_backward")}
# Per input element: sum 1; mean 1 (the division is per output); var/std: difference,
# square-accumulate (2); norm: square-accumulate; logsumexp: max, sub, exp, sum.
REDUCTION_OPS = {"sum": 1, "mean": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "argmax": 1,
                 "argmin": 1, "prod": 1, "all": 1, "any": 1, "var": 3, "std": 3,
                 "var_mean": 3, "std_mean": 3, "norm": 2, "linalg_vector_norm": 2,
                 "logsumexp": 4}
REDUCTION_DIM_ARG = {"norm": 2, "linalg_vector_norm": 2}  # (self, p, dim, ...)
# Interpolation: taps per output element (each tap a multiply-add, 2 ops); nearest copies.
# Bilinear's 4 taps give 8 ops per output, the convention ceiling's CPU and GPU suites count a
# resize by too (bilinear_ops_per_output, kernels/registry.hpp).
UPSAMPLE_TAPS = {"upsample_nearest1d": 0, "upsample_nearest2d": 0, "upsample_nearest3d": 0,
                 "_upsample_nearest_exact1d": 0, "_upsample_nearest_exact2d": 0,
                 "_upsample_nearest_exact3d": 0, "upsample_linear1d": 2,
                 "upsample_bilinear2d": 4, "upsample_trilinear3d": 8, "upsample_bicubic2d": 16}
VIEWS = {"view", "_unsafe_view", "_reshape_alias", "reshape", "t", "t_", "transpose",
         "transpose_", "permute", "expand", "expand_as", "slice", "select", "unsqueeze",
         "unsqueeze_", "squeeze", "squeeze_", "as_strided", "alias", "detach", "detach_",
         "unbind", "split", "split_with_sizes", "chunk", "narrow", "unfold", "diagonal",
         "view_as_real", "view_as_complex", "lift_fresh", "flatten", "movedim", "_conj",
         "_neg_view", "unflatten", "set_", "unsafe_split", "unsafe_split_with_sizes",
         "unsafe_chunk"}
ALLOCATIONS = {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided",
               "resize_"}
FILLS = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "new_zeros",
         "new_ones", "new_full", "fill", "zero", "scalar_tensor"}
# Random numbers written into a tensor (in place: uniform_, normal_, bernoulli_; or a new one
# of a size: randn, rand, randint): the bytes written; the generator's arithmetic is not
# counted (its cost per number depends on the generator).
RANDOM_FILLS = {"uniform", "normal", "bernoulli", "exponential", "random", "geometric",
                "log_normal", "cauchy", "randn", "rand", "randint", "randn_like", "rand_like",
                "randint_like"}
# Same-size copies (a tensor read, one of its size written), some with a select per element.
COPIES = {"copy", "clone", "_to_copy", "contiguous", "to", "flip", "roll", "_copy_from",
          "_copy_from_and_resize", "pixel_shuffle", "pixel_unshuffle", "tril", "triu",
          "channel_shuffle"}
# Running sums and products along a dimension: one operation per element.
SCANS = {"cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"}
# Losses over two tensors of one shape (input, target): operations per element, then the
# mean or sum of them (1 per element) unless reduction is none (0).
LOSS_OPS = {"mse_loss": 2, "l1_loss": 2, "smooth_l1_loss": 4, "huber_loss": 4,
            "binary_cross_entropy": 5, "binary_cross_entropy_with_logits": 7}


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


# --- families: (ops, bytes, written) of one call, or None when the arguments do not fit ----
# written: the bytes of the outputs among `bytes` (the stores), which pick the stream kernel
# whose bandwidth roof judges the op (`{written=...}`, agent/run/region.cpp).

def _pointwise(c):
    ts = _tensors(c.args, c.kwargs)
    if not ts:
        return None
    shape = torch.broadcast_shapes(*[t.shape for t in ts]) if not c.inplace else ts[0].shape
    n = math.prod(shape)
    # where(condition, x, y): the output is the values' dtype, not the bool condition's.
    values = _values(ts)
    out_item = 1 if c.base in COMPARISONS else values.element_size()
    if c.base == "native_dropout":
        out_item = ts[0].element_size() + 1  # the output and its bool mask
    if c.base == "glu":  # halves the chosen dimension
        n //= 2
    return n * OPS_PER_ELEMENT[c.base], sum(_nbytes(t) for t in ts) + n * out_item, n * out_item


def _matmul_dims(a, b):
    """Batch, m, k, n of a @ b (torch.matmul's broadcasting, 1-D operands promoted)."""
    sa, sb = list(a.shape), list(b.shape)
    if len(sa) == 1:
        sa = [1] + sa
    if len(sb) == 1:
        sb = sb + [1]
    batch = torch.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]))
    return math.prod(batch), sa[-2], sa[-1], sb[-1]


def _matmul(c):
    a, b = c.args[0], c.args[1]
    batch, m, k, n = _matmul_dims(a, b)
    out = batch * m * n * a.element_size()
    return 2 * batch * m * k * n, _nbytes(a) + _nbytes(b) + out, out


def _addmm(c):
    # self + a @ b (addmm, baddbmm, addmv, addbmm): the product, then the add per output.
    bias, a, b = c.args[0], c.args[1], c.args[2]
    batch, m, k, n = _matmul_dims(a, b)
    out = m * n if c.base == "addbmm" else batch * m * n  # addbmm sums over the batch
    ops = 2 * batch * m * k * n + out
    return ops, _nbytes(bias) + _nbytes(a) + _nbytes(b) + out * a.element_size(), out * a.element_size()


def _linear(c):
    x, w = c.args[0], c.args[1]
    bias = _arg(c.args, c.kwargs, 2, "bias")
    k, n = x.shape[-1], w.shape[0]
    rows = x.numel() // k if k else 0
    ops = 2 * rows * k * n + (rows * n if bias is not None else 0)
    read = _nbytes(x) + _nbytes(w) + (_nbytes(bias) if bias is not None else 0)
    return ops, read + rows * n * x.element_size(), rows * n * x.element_size()


# Argument positions of the convolution ops' parameters.
_FORWARD = {"input": 0, "weight": 1, "bias": 2}
CONV_ARGS = {
    "convolution": {**_FORWARD, "stride": 3, "padding": 4, "dilation": 5, "transposed": 6,
                    "output_padding": 7, "groups": 8},
    "_convolution": {**_FORWARD, "stride": 3, "padding": 4, "dilation": 5, "transposed": 6,
                     "output_padding": 7, "groups": 8},
    "conv1d": {**_FORWARD, "stride": 3, "padding": 4, "dilation": 5, "groups": 6},
    "conv2d": {**_FORWARD, "stride": 3, "padding": 4, "dilation": 5, "groups": 6},
    "conv3d": {**_FORWARD, "stride": 3, "padding": 4, "dilation": 5, "groups": 6},
    "mkldnn_convolution": {**_FORWARD, "padding": 3, "stride": 4, "dilation": 5, "groups": 6},
    # (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    #  output_padding, groups, output_mask)
    "convolution_backward": {"input": 1, "weight": 2, "stride": 4, "padding": 5, "dilation": 6,
                             "transposed": 7, "output_padding": 8, "groups": 9, "mask": 10},
}


def conv_geometry(base, args, kwargs):
    """Shapes of a convolution call: (x, w, bias, stride, padding, dilation, transposed,
    groups, output spatial sizes)."""
    pos = CONV_ARGS[base]
    x, w = args[pos["input"]], args[pos["weight"]]
    bias = _arg(args, kwargs, pos["bias"], "bias") if "bias" in pos else None
    dims = w.dim() - 2
    stride = _as_list(_arg(args, kwargs, pos["stride"], "stride", 1), dims)
    padding = _arg(args, kwargs, pos["padding"], "padding", 0)
    if isinstance(padding, str):  # 'same' / 'valid': aten.convolution sees numbers
        return None
    padding = _as_list(padding, dims)
    dilation = _as_list(_arg(args, kwargs, pos["dilation"], "dilation", 1), dims)
    transposed = bool(_arg(args, kwargs, pos["transposed"], "transposed", False)) if "transposed" in pos else False
    groups = int(_arg(args, kwargs, pos["groups"], "groups", 1))
    spatial_in = list(x.shape[-dims:])
    k = list(w.shape[2:])
    if transposed:
        out_pad = _as_list(_arg(args, kwargs, pos["output_padding"], "output_padding", 0), dims)
        out = [(i - 1) * s - 2 * p + d * (kk - 1) + op + 1
               for i, s, p, d, kk, op in zip(spatial_in, stride, padding, dilation, k, out_pad)]
    else:
        out = [(i + 2 * p - d * (kk - 1) - 1) // s + 1
               for i, s, p, d, kk in zip(spatial_in, stride, padding, dilation, k)]
    return x, w, bias, transposed, groups, out


def conv_class(x, w, transposed, groups):
    """Depthwise: one filter group per input channel; pointwise: 1x1 kernels, one group."""
    if transposed:
        return "conv transposed"
    channels_in = x.shape[1] if x.dim() == w.dim() else x.shape[0]  # batched or not
    if groups > 1 and groups == channels_in:
        return "conv depthwise"
    if groups > 1:
        return "conv grouped"
    if all(k == 1 for k in w.shape[2:]):
        return "conv pointwise"
    return "conv dense"


def _conv(c):
    g = conv_geometry(c.base, c.args, c.kwargs)
    if g is None:
        return None
    x, w, bias, transposed, groups, out = g
    batch = x.shape[0] if x.dim() == w.dim() else 1
    k = math.prod(w.shape[2:])
    if transposed:  # w: [Cin, Cout/groups, k...]; every input element meets Cout/groups filters
        c_in, c_out = w.shape[0], w.shape[1] * groups
        macs = batch * c_in * math.prod(x.shape[-len(out):]) * (c_out // groups) * k
    else:  # w: [Cout, Cin/groups, k...]
        c_out = w.shape[0]
        macs = batch * c_out * math.prod(out) * w.shape[1] * k
    out_elems = batch * c_out * math.prod(out)
    if c.base == "convolution_backward":
        # grad_input and grad_weight each cost the forward's multiply-adds; grad_bias sums
        # grad_output. Reads grad_output, input, weight; writes the gradients asked for.
        grad_input, grad_weight, grad_bias = (list(c.args[10]) + [True] * 3)[:3]
        ops = 2 * macs * (int(grad_input) + int(grad_weight)) + (out_elems if grad_bias else 0)
        written = (_nbytes(x) if grad_input else 0) + (_nbytes(w) if grad_weight else 0)
        written += c_out * x.element_size() if grad_bias else 0
        return ops, _nbytes(c.args[0]) + _nbytes(x) + _nbytes(w) + written, written
    ops = 2 * macs + (out_elems if bias is not None else 0)
    read = _nbytes(x) + _nbytes(w) + (_nbytes(bias) if bias is not None else 0)
    return ops, read + out_elems * x.element_size(), out_elems * x.element_size()


def _batch_norm(c):
    # Inference folds the statistics into a per-channel scale and shift (a multiply-add per
    # element); training first reduces mean (1) and variance (2) per element.
    x = c.args[0]
    training = bool(_arg(c.args, c.kwargs, 5, "training", False))
    params = sum(_nbytes(t) for t in c.args[1:5] if _is_tensor(t))
    return x.numel() * (5 if training else 2), 2 * _nbytes(x) + params, _nbytes(x)


def _layer_norm(c):
    # Mean (1) and variance (2) per element, normalise (2), affine (2) when weighted.
    x = c.args[0]
    weight = c.args[1] if c.base == "native_group_norm" else _arg(c.args, c.kwargs, 2, "weight")
    params = sum(_nbytes(t) for t in list(c.args[1:4]) + [c.kwargs.get("weight"), c.kwargs.get("bias")]
                 if _is_tensor(t))
    return x.numel() * (7 if weight is not None else 5), 2 * _nbytes(x) + params, _nbytes(x)


def _norm_backward(c):
    # grad_input from grad_out and the saved statistics: two reductions over the batch
    # (sum of grad_out, of grad_out * x_hat: 3 per element) and the elementwise update (5);
    # in inference only the per-channel scale (1). Reads grad_out and input, writes grad_input.
    grad_out, x = c.args[0], c.args[1]
    training = bool(c.args[7]) if c.base == "native_batch_norm_backward" else True
    return x.numel() * (8 if training else 1), _nbytes(grad_out) + 2 * _nbytes(x), _nbytes(x)


def _pool_backward(c):
    # Each grad_output element added to the input position its index names (max pooling).
    grad_out, x = c.args[0], c.args[1]
    indices = c.args[-1] if _is_tensor(c.args[-1]) and c.args[-1] is not x else None
    read = _nbytes(grad_out) + (_nbytes(indices) if indices is not None else 0)
    return grad_out.numel(), read + _nbytes(x), _nbytes(x)


def _softmax_backward(c):
    # softmax: y * (dy - sum(dy * y)); log_softmax: dy - exp(y) * sum(dy): 3 per element and
    # a sum (1). Reads grad_output and the forward's output, writes grad_input.
    grad_out = c.args[0]
    return 4 * grad_out.numel(), 3 * _nbytes(grad_out), _nbytes(grad_out)


def _softmax(c):
    # max, subtract, exp, sum, divide (log_softmax: log of the sum, subtract).
    x = c.args[0]
    return 5 * x.numel(), 2 * _nbytes(x), _nbytes(x)


def _attention_ops(rows, cols, e_qk, e_v):
    """Q K^T and the scores times V for `rows` query rows (over the batch) of `cols` keys, e_qk
    and e_v summed over the heads where they are split. The softmax of the scores (scale,
    max, subtract, exp, sum, divide: 5 a score) is the caller's: its scores are per head."""
    return 2 * rows * cols * e_qk + 2 * rows * cols * e_v


def _sdpa(c):
    # softmax(Q K^T / sqrt(E) [+ mask]) V on [..., L, E] queries, [..., S, E] keys and
    # [..., S, Ev] values; the attention weights are an output only where asked for.
    q, k, v = c.args[0], c.args[1], c.args[2]
    batch = math.prod(q.shape[:-2])
    rows, cols, e, ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    out = batch * rows * ev * q.element_size()
    # Only 1.13's _scaled_dot_product_attention has need_attn_weights (its argument 5); in
    # torch 2.x argument 5 of scaled_dot_product_attention is is_causal, and no variant
    # returns the weights.
    weights = (_arg(c.args, c.kwargs, 5, "need_attn_weights", False)
               if c.base == "_scaled_dot_product_attention" else False)
    out += batch * rows * cols * q.element_size() if weights else 0
    ops = _attention_ops(batch * rows, cols, e, ev) + 5 * batch * rows * cols
    mask = _arg(c.args, c.kwargs, 3, "attn_mask")
    read = _nbytes(q) + _nbytes(k) + _nbytes(v) + (_nbytes(mask) if _is_tensor(mask) else 0)
    return ops, read + out, out


def _mha(c):
    # nn.MultiheadAttention's fused path (_native_multi_head_attention): the in-projection of
    # query, key and value, attention over num_head heads of embed_dim / num_head, the
    # out-projection. Batch-first [B, L, d] query, [B, S, d] key and value.
    q, k, v = c.args[0], c.args[1], c.args[2]
    d, heads = int(c.args[3]), int(c.args[4])
    if q.dim() != 3 or k.dim() != 3:
        return None
    batch, rows, cols = q.shape[0], q.shape[1], k.shape[1]
    ops = 2 * batch * (rows + 2 * cols) * d * d + batch * (rows + 2 * cols) * d  # in-proj, bias
    ops += _attention_ops(batch * rows, cols, d, d) + 5 * batch * heads * rows * cols
    ops += 2 * batch * rows * d * d + batch * rows * d  # out-projection and its bias
    params = sum(_nbytes(t) for t in c.args[5:9] if _is_tensor(t))
    out = batch * rows * d * q.element_size()
    if _arg(c.args, c.kwargs, 10, "need_weights", True):
        average = _arg(c.args, c.kwargs, 11, "average_attn_weights", True)
        out += batch * (1 if average else heads) * rows * cols * q.element_size()
    read = _nbytes(q) + (_nbytes(k) if k is not q else 0) + (_nbytes(v) if v is not q and v is not k else 0)
    return ops, read + params + out, out


def _encoder_layer(c):
    # nn.TransformerEncoderLayer's fused inference path (_transformer_encoder_layer_fwd): self
    # attention as _mha's, two residual adds, two layer norms (7 an element), the feed-forward
    # network (two linear layers with biases, ReLU 1 or GELU 5 an element between). [B, L, d].
    src, d, heads = c.args[0], int(c.args[1]), int(c.args[2])
    ffn_1 = c.args[14]
    if src.dim() != 3 or src.is_nested:
        return None
    batch, rows = src.shape[0], src.shape[1]
    tokens, hidden = batch * rows, ffn_1.shape[0]
    act = OPS_PER_ELEMENT["gelu" if c.args[7] else "relu"]
    ops = 2 * tokens * d * 3 * d + 3 * tokens * d  # qkv projection and its bias
    ops += _attention_ops(tokens, rows, d, d) + 5 * batch * heads * rows * rows
    ops += 2 * tokens * d * d + tokens * d  # out-projection
    ops += 2 * tokens * d + 2 * 7 * tokens * d  # residual adds, layer norms
    ops += 2 * tokens * d * hidden + tokens * hidden + act * tokens * hidden  # ffn 1, activation
    ops += 2 * tokens * hidden * d + tokens * d  # ffn 2
    params = sum(_nbytes(t) for t in c.args[3:18] if _is_tensor(t))
    out = tokens * d * src.element_size()
    return ops, _nbytes(src) + params + out, out


def _pool_out(spatial, kernel, stride, padding, dilation, ceil_mode):
    out = []
    for i, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
        span = i + 2 * p - d * (k - 1) - 1
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= i + p:  # the last window must start inside
            o -= 1
        out.append(o)
    return out


def _pool(c):
    x = c.args[0]
    dims = _spatial_dims(c.base)
    kernel = _as_list(c.args[1], dims)
    stride = _arg(c.args, c.kwargs, 2, "stride", None) or kernel
    stride = _as_list(stride, dims)
    padding = _as_list(_arg(c.args, c.kwargs, 3, "padding", 0), dims)
    is_max = "max" in c.base
    dilation = _as_list(_arg(c.args, c.kwargs, 4, "dilation", 1), dims) if is_max else [1] * dims
    ceil_mode = bool(_arg(c.args, c.kwargs, 5 if is_max else 4, "ceil_mode", False))
    out = _pool_out(list(x.shape[-dims:]), kernel, stride, padding, dilation, ceil_mode)
    lead = x.numel() // max(1, math.prod(x.shape[-dims:]))
    out_elems = lead * math.prod(out)
    window = math.prod(kernel)
    ops = out_elems * (window if is_max else window + 1)  # compares; or adds and a divide
    written = out_elems * (x.element_size() + (8 if c.base.endswith("with_indices") else 0))
    return ops, _nbytes(x) + written, written


def _adaptive_pool(c):
    # Each input element enters about one window; avg divides once per output.
    x, size = c.args[0], list(c.args[1])
    dims = len(size)
    size = [s if s is not None else i for s, i in zip(size, x.shape[-dims:])]
    out_elems = x.numel() // max(1, math.prod(x.shape[-dims:])) * math.prod(size)
    indices = 8 if "max" in c.base else 0
    written = out_elems * (x.element_size() + indices)
    return x.numel() + out_elems, _nbytes(x) + written, written


def _upsample(c):
    x = c.args[0]
    dims = _spatial_dims(c.base)
    size = c.args[1] if len(c.args) > 1 else c.kwargs.get("output_size")
    if size is None:  # .vec overloads: scale factors instead of a size
        scales = next((a for a in reversed(c.args[2:]) if isinstance(a, (list, tuple))), None)
        if scales is None:
            return None
        size = [int(math.floor(i * s)) for i, s in zip(x.shape[-dims:], scales)]
    out_elems = x.numel() // max(1, math.prod(x.shape[-dims:])) * math.prod(size)
    written = out_elems * x.element_size()
    return 2 * UPSAMPLE_TAPS[c.base] * out_elems, _nbytes(x) + written, written


def _reduce(c):
    x = c.args[0]
    if len(c.args) > 1 and _is_tensor(c.args[1]):  # max(a, b), min(a, b): elementwise
        written = x.numel() * x.element_size()
        return x.numel(), _nbytes(x) + _nbytes(c.args[1]) + written, written
    dim = _arg(c.args, c.kwargs, REDUCTION_DIM_ARG.get(c.base, 1), "dim", None)
    if isinstance(dim, int):
        dim = [dim]
    if not isinstance(dim, (list, tuple)) or len(dim) == 0 or x.dim() == 0:
        out_elems = 1
    else:
        out_elems = x.numel() // max(1, math.prod(x.shape[d] for d in dim))
    indices = 8 if c.base in ("max", "min") and dim else 0
    # argmax and argmin write only their int64 indices.
    item = 8 if c.base in ("argmax", "argmin") else x.element_size() + indices
    written = out_elems * item
    return REDUCTION_OPS[c.base] * x.numel(), _nbytes(x) + written, written


def _copy(c):
    ts = _tensors(c.args, c.kwargs)
    if not ts:
        return None
    if c.base == "copy":  # copy_(self, src): read src, write self
        return (0, _nbytes(ts[1]) + _nbytes(ts[0]), _nbytes(ts[0])) if len(ts) > 1 else None
    dtype = c.kwargs.get("dtype") or ts[0].dtype
    item = torch.empty((), dtype=dtype).element_size() if dtype != ts[0].dtype else ts[0].element_size()
    return 0, _nbytes(ts[0]) + ts[0].numel() * item, ts[0].numel() * item


def _concat(c):
    ts = _tensors(c.args, c.kwargs)
    return 0, 2 * sum(_nbytes(t) for t in ts), sum(_nbytes(t) for t in ts)


def _pad(c):
    x, pad = c.args[0], list(c.args[1])
    shape = list(x.shape)
    for i in range(len(pad) // 2):
        shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    written = math.prod(shape) * x.element_size()
    return 0, _nbytes(x) + written, written


def _gather(c):
    # Rows or elements picked by an index: the index read, each picked element read and written.
    if c.base == "embedding":
        weight, index = c.args[0], c.args[1]
        out = index.numel() * weight.shape[-1]
        item = weight.element_size()
    elif c.base == "index_select":
        x, dim, index = c.args[0], c.args[1], c.args[2]
        out = x.numel() // max(1, x.shape[dim]) * index.numel()
        item = x.element_size()
    else:  # gather(self, dim, index)
        index = c.args[2]
        out = index.numel()
        item = c.args[0].element_size()
    return 0, _nbytes(index) + 2 * out * item, out * item


def _index(c):
    # x[idx] with one integer index tensor on the first dimension (rows picked by index, as
    # gather's): a boolean mask, or indices on several dimensions, pick a number of elements
    # the shapes alone do not give (or broadcast in ways not followed here): no formula.
    x, indices = c.args[0], list(c.args[1])
    if not indices or indices[0] is None or any(i is not None for i in indices[1:]):
        return None
    index = indices[0]
    if index.dtype in (torch.bool, torch.uint8):
        return None
    out = index.numel() * (x.numel() // max(1, x.shape[0])) * x.element_size()
    return 0, _nbytes(index) + 2 * out, out


def _fill(c):
    ts = _tensors(c.args, c.kwargs)
    if c.base in ("zeros", "ones", "full", "new_zeros", "new_ones", "new_full"):
        size = c.args[1] if c.base.startswith("new_") else c.args[0]
        dtype = c.kwargs.get("dtype") or (ts[0].dtype if ts else torch.get_default_dtype())
        written = math.prod(size) * torch.empty((), dtype=dtype).element_size()
        return 0, written, written
    if c.base == "scalar_tensor":  # one element of its dtype (the default dtype unless given)
        item = torch.empty((), dtype=c.kwargs.get("dtype") or torch.get_default_dtype()).element_size()
        return 0, item, item
    return (0, _nbytes(ts[0]), _nbytes(ts[0])) if ts else None


def _random(c):
    ts = _tensors(c.args, c.kwargs)
    if c.base in ("randn", "rand", "randint"):
        size = next(a for a in c.args if isinstance(a, (list, tuple)))
        default = torch.int64 if c.base == "randint" else torch.get_default_dtype()
        dtype = c.kwargs.get("dtype") or default
        written = math.prod(size) * torch.empty((), dtype=dtype).element_size()
        return 0, written, written
    return (0, _nbytes(ts[0]), _nbytes(ts[0])) if ts else None  # in place, or *_like


def _arange(c):
    # arange(end), arange(start, end), arange(start, end, step): ceil((end - start) / step).
    nums = [a for a in c.args if isinstance(a, (int, float))]
    start, end, step = (0, nums[0], 1) if len(nums) == 1 else (nums + [1])[:3]
    n = max(0, math.ceil((end - start) / step))
    default = torch.int64 if all(isinstance(v, int) for v in nums) else torch.get_default_dtype()
    written = n * torch.empty((), dtype=c.kwargs.get("dtype") or default).element_size()
    return n, written, written


def _repeat(c):
    x, repeats = c.args[0], list(c.args[1])
    shape = [1] * (len(repeats) - x.dim()) + list(x.shape)
    written = math.prod(s * r for s, r in zip(shape, repeats)) * x.element_size()
    return 0, _nbytes(x) + written, written


def _scan(c):
    x = c.args[0]
    written = _nbytes(x) + (x.numel() * 8 if c.base in ("cummax", "cummin") else 0)  # indices
    return x.numel(), _nbytes(x) + written, written


def _loss(c):
    x, target = c.args[0], c.args[1]
    weight = _arg(c.args, c.kwargs, 2, "weight") if c.base.startswith("binary") else None
    # binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction): its
    # reduction comes after pos_weight; binary_cross_entropy(self, target, weight, reduction).
    logits = c.base == "binary_cross_entropy_with_logits"
    pos_weight = _arg(c.args, c.kwargs, 3, "pos_weight") if logits else None
    at = 4 if logits else 3 if c.base.startswith("binary") else 2
    reduction = _arg(c.args, c.kwargs, at, "reduction", 1)
    ops = LOSS_OPS[c.base] * x.numel() + (x.numel() if reduction else 0)
    written = (1 if reduction else x.numel()) * x.element_size()
    read = _nbytes(x) + _nbytes(target) + sum(_nbytes(t) for t in (weight, pos_weight) if _is_tensor(t))
    return ops, read + written, written


def _embedding_bag(c):
    # The picked rows summed (or averaged, or maxed) into one row per bag: a row read and one
    # operation per element for each index, the bags written (its bookkeeping outputs, an
    # int64 per index or bag, too).
    weight, indices, offsets = c.args[0], c.args[1], c.args[2]
    last = bool(_arg(c.args, c.kwargs, 7, "include_last_offset", False))
    bags = offsets.numel() - (1 if last else 0)
    dim = weight.shape[-1]
    out = bags * dim * weight.element_size()
    book = 8 * (indices.numel() + 2 * bags)
    read = _nbytes(indices) + _nbytes(offsets) + indices.numel() * dim * weight.element_size()
    return indices.numel() * dim, read + out + book, out + book


def _nothing(_c):
    return 0, 0, 0


def _item(c):
    return 0, c.args[0].element_size(), 0


# Op (its name without namespace and overload; an in-place op is looked up without its
# trailing "_") -> (family, class in the op summary).
TABLE = {}
for _name in OPS_PER_ELEMENT:
    TABLE[_name] = (_pointwise, "activation backward" if _name in ACTIVATION_GRADIENTS
                    else "activation" if _name in ACTIVATIONS else "elementwise")
TABLE.update({
    "mm": (_matmul, "matmul"), "bmm": (_matmul, "matmul"), "matmul": (_matmul, "matmul"),
    "mv": (_matmul, "matmul"), "dot": (_matmul, "matmul"), "vdot": (_matmul, "matmul"),
    "addmm": (_addmm, "linear"), "baddbmm": (_addmm, "matmul"), "addbmm": (_addmm, "matmul"),
    "addmv": (_addmm, "matmul"), "linear": (_linear, "linear"),
    "native_batch_norm": (_batch_norm, "norm"), "batch_norm": (_batch_norm, "norm"),
    "layer_norm": (_layer_norm, "norm"), "group_norm": (_layer_norm, "norm"),
    "native_batch_norm_backward": (_norm_backward, "norm backward"),
    "native_layer_norm_backward": (_norm_backward, "norm backward"),
    "native_group_norm_backward": (_norm_backward, "norm backward"),
    "max_pool2d_with_indices_backward": (_pool_backward, "pooling backward"),
    "max_pool3d_with_indices_backward": (_pool_backward, "pooling backward"),
    "_softmax_backward_data": (_softmax_backward, "softmax backward"),
    "_log_softmax_backward_data": (_softmax_backward, "softmax backward"),
    "native_layer_norm": (_layer_norm, "norm"), "native_group_norm": (_layer_norm, "norm"),
    "_softmax": (_softmax, "softmax"), "_log_softmax": (_softmax, "softmax"),
    "softmax": (_softmax, "softmax"), "log_softmax": (_softmax, "softmax"),
    "constant_pad_nd": (_pad, "copy"), "cat": (_concat, "copy"), "stack": (_concat, "copy"),
    "embedding": (_gather, "gather"), "index_select": (_gather, "gather"),
    "gather": (_gather, "gather"), "_local_scalar_dense": (_item, "copy"),
    "_native_multi_head_attention": (_mha, "attention"),
    "_transformer_encoder_layer_fwd": (_encoder_layer, "transformer layer"),
})
# Families of ops by name: (names, family, class in the op summary).
_FAMILIES = [
    (("scaled_dot_product_attention", "_scaled_dot_product_attention",
      "_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
      "_scaled_dot_product_efficient_attention"), _sdpa, "attention"),
    (CONV_ARGS, _conv, None),  # the class comes from the geometry (conv_class)
    (("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
      "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
      "mkldnn_max_pool2d", "mkldnn_max_pool3d"), _pool, "pooling"),
    (("_adaptive_avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
      "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
      "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"), _adaptive_pool,
     "pooling"),
    (UPSAMPLE_TAPS, _upsample, "interpolation"),
    (REDUCTION_OPS, _reduce, "reduction"),
    (COPIES, _copy, "copy"),
    (VIEWS, _nothing, "view (no data moved)"),
    (ALLOCATIONS, _nothing, "allocation (no data moved)"),
    (FILLS, _fill, "fill"),
    (("arange",), _arange, "fill"),
    (RANDOM_FILLS, _random, "random fill"),
    (SCANS, _scan, "scan"),
    (LOSS_OPS, _loss, "loss"),
    (("repeat",), _repeat, "copy"),
    (("_embedding_bag",), _embedding_bag, "gather"),
    (("index",), _index, "gather"),
]
for _names, _family, _cls in _FAMILIES:
    for _name in _names:
        TABLE[_name] = (_family, _cls)
# Ops outside aten, by their full name: the profiler's markers (optimizers' record_function)
# do no work.
OTHER_NAMESPACES = {n: (_nothing, "no work (profiler marker)")
                    for n in ("profiler::_record_function_enter", "profiler::_record_function_enter_new",
                              "profiler::_record_function_exit")}
# Matrix products inside these modules are the module's linear layer, whatever ATen op
# carries them (nn.Linear on a 3-D input runs aten.mm on a view).
LINEAR_MODULES = {"Linear", "LazyLinear", "Bilinear", "NonDynamicallyQuantizableLinear"}


class _Call:
    __slots__ = ("base", "inplace", "args", "kwargs")

    def __init__(self, base, inplace, args, kwargs):
        self.base, self.inplace, self.args, self.kwargs = base, inplace, args, kwargs


def op_name(func):
    """'aten.convolution', 'aten.add.Tensor', 'torchvision.nms'."""
    name = str(func)
    return name[: -len(".default")] if name.endswith(".default") else name


def lookup(func):
    """(base name, in place, family, class) of an op; family None without a formula."""
    namespace, _, base = func._schema.name.partition("::")
    if namespace != "aten":
        family, cls = OTHER_NAMESPACES.get(func._schema.name, (None, None))
        return base, False, family, cls
    if base in TABLE:
        return base, False, TABLE[base][0], TABLE[base][1]
    if base.endswith("_") and base[:-1] in TABLE:
        return base[:-1], True, TABLE[base[:-1]][0], TABLE[base[:-1]][1]
    return base, False, None, None


def work(entry, args, kwargs, module_class=None):
    """(class, ops, bytes, working set, precision, written) of one call, or None when there is no
    formula. The working set is the distinct bytes touched: an in-place op reads and writes
    the same tensor, which its compulsory bytes count twice."""
    base, inplace, family, cls = entry
    if family is None:
        return None
    try:
        result = family(_Call(base, inplace, args, kwargs))
    except (IndexError, TypeError, ValueError, RuntimeError, AttributeError, ZeroDivisionError):
        result = None  # arguments this formula does not know: no formula, never a guess
    if result is None or result[1] is None:
        return None
    ts = _tensors(args, kwargs)
    if family is _conv:
        g = conv_geometry(base, args, kwargs)
        cls = conv_class(g[0], g[1], g[3], g[4]) + (" backward" if base == "convolution_backward" else "")
    elif cls == "matmul" and module_class in LINEAR_MODULES:
        cls = "linear"
    precision = PRECISION.get(_values(ts).dtype) if ts else None
    working_set = result[1] - (_nbytes(ts[0]) if inplace and family is _pointwise else 0)
    return cls, int(result[0]), int(result[1]), int(working_set), precision, int(result[2])


def describe(func, entry, args, kwargs, module_class=None):
    """The range message of one call (see the module's docstring)."""
    name = op_name(func)
    w = work(entry, args, kwargs, module_class)
    if w is None:
        return f"{name} [no formula]"
    cls, ops, nbytes, working_set, precision, written = w
    p = f" precision={precision}" if precision else ""
    # What one op touches picks its memory level (the roofline's working set); what it
    # stores, the stream kernel whose roof judges it.
    return (f"{name} [{cls}] {{ops={ops} bytes={nbytes} working_set={working_set} "
            f"written={written}{p}}}")
