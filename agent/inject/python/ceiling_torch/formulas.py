"""The work of one ATen operator call, from its arguments' shapes, dtypes and parameters.

`describe(func, args, kwargs)` gives the NVTX message of the call's range:

    aten.convolution [conv depthwise] {ops=5419008 bytes=2408704 working_set=2408704 written=1204224 precision=fp32}
    torchvision.nms [no formula]

Operations follow DESIGN.md: one multiply-add counts 2; elementwise and normalising work
counts each arithmetic operation or elementary function (exp, erf, sqrt) as 1, per element,
from the OPS_PER_ELEMENT numbers (formulas_common.py). Bytes are compulsory: each input
tensor read once, each output written once (an in-place op reads and writes its tensor);
`written` is the outputs' share of them. The output's shape comes from the same arguments
(the range's message is needed before the op runs); its dtype is the first input's, bool
for comparisons. An op missing from TABLE, or one whose work depends on the data (nms), is
"[no formula]": listed, never counted as 0.

This module holds the forward ops and the lookup; the others, by topic:
formulas_attention.py (scaled_dot_product_attention's kernels, forward and backward, and the
fused MultiheadAttention and encoder layer), formulas_training.py (gradients, the loss,
optimizers' _foreach_ and _fused_ ops), formulas_indexing.py (gather, index, index_put,
scatter).
"""
import math

import torch

from . import formulas_attention, formulas_indexing, formulas_training
from .formulas_common import (ACTIVATION_GRADIENTS, ACTIVATIONS, COMPARISONS, OPS_PER_ELEMENT,
                              PRECISION, UPSAMPLE_TAPS, _alpha_ops, _arg, _as_list, _Call,
                              _is_tensor, _nbytes, _spatial_dims, _tensors, _values)

# Per input element: sum 1; mean 1 (the division is per output); var/std: difference,
# square-accumulate (2); norm: square-accumulate; logsumexp: max, sub, exp, sum.
REDUCTION_OPS = {"sum": 1, "mean": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "argmax": 1,
                 "argmin": 1, "prod": 1, "all": 1, "any": 1, "var": 3, "std": 3,
                 "var_mean": 3, "std_mean": 3, "norm": 2, "linalg_vector_norm": 2,
                 "logsumexp": 4}
REDUCTION_DIM_ARG = {"norm": 2, "linalg_vector_norm": 2}  # (self, p, dim, ...)
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
    ops = n * (OPS_PER_ELEMENT[c.base] + _alpha_ops(c))
    return ops, sum(_nbytes(t) for t in ts) + n * out_item, n * out_item


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
    # self + a @ b (addmm, baddbmm, addmv, addbmm): the product, then the add per output;
    # _addmm_activation (a Linear and its ReLU or GELU fused) then the activation's ops.
    bias, a, b = c.args[0], c.args[1], c.args[2]
    batch, m, k, n = _matmul_dims(a, b)
    out = m * n if c.base == "addbmm" else batch * m * n  # addbmm sums over the batch
    ops = 2 * batch * m * k * n + out
    if c.base == "_addmm_activation":
        ops += out * OPS_PER_ELEMENT["gelu" if c.get("use_gelu", False) else "relu"]
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


def _softmax(c):
    # max, subtract, exp, sum, divide (log_softmax: log of the sum, subtract).
    x = c.args[0]
    return 5 * x.numel(), 2 * _nbytes(x), _nbytes(x)


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


# grid_sampler's interpolation_mode -> taps per output element in 2-D (3-D: trilinear's 8).
GRID_TAPS = {0: 4, 1: 0, 2: 16}  # bilinear, nearest, bicubic


def _grid_sample(c):
    # grid_sampler_{2,3}d(input, grid, interpolation_mode, padding_mode, align_corners):
    # input [N, C, (D,) H, W] sampled at grid [N, (Do,) Ho, Wo, dims] points; per point its
    # coordinates unnormalised (a multiply-add per dimension), then per channel the taps (a
    # multiply-add each) as interpolation counts them.
    x, grid = c.args[0], c.args[1]
    dims = grid.shape[-1]
    points = grid.numel() // dims
    mode = int(c.get("interpolation_mode", 0))
    taps = GRID_TAPS[mode] if dims == 2 else {0: 8, 1: 0}[mode]
    out_elems = points * x.shape[1]
    written = out_elems * x.element_size()
    ops = 2 * dims * points + 2 * taps * out_elems
    return ops, _nbytes(x) + _nbytes(grid) + written, written


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
    "_addmm_activation": (_addmm, "linear"),
    "native_batch_norm": (_batch_norm, "norm"), "batch_norm": (_batch_norm, "norm"),
    "layer_norm": (_layer_norm, "norm"), "group_norm": (_layer_norm, "norm"),
    "native_layer_norm": (_layer_norm, "norm"), "native_group_norm": (_layer_norm, "norm"),
    "_softmax": (_softmax, "softmax"), "_log_softmax": (_softmax, "softmax"),
    "softmax": (_softmax, "softmax"), "log_softmax": (_softmax, "softmax"),
    # torch 2.x's math attention: a softmax that gives 0, not NaN, to fully masked rows
    "_safe_softmax": (_softmax, "softmax"),
    "constant_pad_nd": (_pad, "copy"), "cat": (_concat, "copy"), "stack": (_concat, "copy"),
    "_local_scalar_dense": (_item, "copy"),
    "grid_sampler_2d": (_grid_sample, "interpolation"),
    "grid_sampler_3d": (_grid_sample, "interpolation"),
})
# Families of ops by name: (names, family, class in the op summary).
_FAMILIES = [
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
    # Borders mirrored or repeated: a copy into the larger tensor, as constant_pad_nd's.
    ([f"{k}_pad{d}d" for k in ("reflection", "replication") for d in (1, 2, 3)], _pad, "copy"),
]
for _names, _family, _cls in _FAMILIES:
    for _name in _names:
        TABLE[_name] = (_family, _cls)
for _part in (formulas_attention.TABLE, formulas_training.TABLE, formulas_indexing.TABLE):
    TABLE.update(_part)
# Ops outside aten, by their full name: the profiler's markers (record_function: optimizers'
# steps, DataLoader's batches) do no work; modules.py opens no range for them.
PROFILER_MARKER = "no work (profiler marker)"
OTHER_NAMESPACES = {n: (_nothing, PROFILER_MARKER)
                    for n in ("profiler::_record_function_enter", "profiler::_record_function_enter_new",
                              "profiler::_record_function_exit")}
# Matrix products inside these modules are the module's linear layer, whatever ATen op
# carries them (nn.Linear on a 3-D input runs aten.mm on a view).
LINEAR_MODULES = {"Linear", "LazyLinear", "Bilinear", "NonDynamicallyQuantizableLinear"}


def op_name(func):
    """'aten.convolution', 'aten.add.Tensor', 'torchvision.nms'."""
    name = str(func)
    return name[: -len(".default")] if name.endswith(".default") else name


def lookup(func):
    """(base name, in place, family, class, argument names) of an op; family None without a
    formula. The names are the op's schema's, in order (_Call.get)."""
    schema = func._schema
    names = tuple(a.name for a in schema.arguments)
    namespace, _, base = schema.name.partition("::")
    if namespace != "aten":
        family, cls = OTHER_NAMESPACES.get(schema.name, (None, None))
        return base, False, family, cls, names
    if base in TABLE:
        return base, False, TABLE[base][0], TABLE[base][1], names
    if base.endswith("_") and base[:-1] in TABLE:
        return base[:-1], True, TABLE[base[:-1]][0], TABLE[base[:-1]][1], names
    return base, False, None, None, names


def work(entry, args, kwargs, module_class=None):
    """(class, ops, bytes, working set, precision, written) of one call, or None when there is no
    formula. The working set is the distinct bytes touched: an in-place op reads and writes
    the same tensor, which its compulsory bytes count twice. A family returns (ops, bytes,
    written), or (ops, bytes, written, working set) where it knows its own (None: bytes)."""
    base, inplace, family, cls, names = entry
    if family is None:
        return None
    try:
        result = family(_Call(base, inplace, args, kwargs, names))
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
    if len(result) > 3 and result[3] is not None:
        working_set = result[3]
    else:
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
