"""Checks ceiling_torch's op formulas against torch itself, without ceiling: for a battery of
ops the formula's bytes must equal the bytes of the real inputs plus the real outputs (so its
output shapes are right), and hand-computed FLOPs and classes must match. Prints one line
per failure and exits 1 on any (tests/integration/torch_run_test.cpp runs it).
Usage: PYTHONPATH=<build>/agent/torch python3 formula_checks.py"""
import math
import sys

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from ceiling_torch import formulas

failures = []
checked = 0

# Families whose compulsory bytes are exactly the inputs read plus the outputs written.
IN_PLUS_OUT = {formulas._pointwise, formulas._matmul, formulas._addmm, formulas._linear,
               formulas._conv, formulas._softmax, formulas._pool, formulas._adaptive_pool,
               formulas._upsample, formulas._reduce, formulas._concat, formulas._pad,
               formulas._random, formulas._arange, formulas._repeat, formulas._scan,
               formulas._loss}


def nbytes(x):
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(nbytes(t) for t in x)
    return 0


class Check(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        global checked
        kwargs = kwargs or {}
        entry = formulas.lookup(func)
        w = formulas.work(entry, args, kwargs)
        out = func(*args, **kwargs)
        self.calls.append((formulas.op_name(func), w))
        if w is not None and entry[2] in IN_PLUS_OUT and not entry[1]:
            expected = sum(nbytes(a) for a in args) + sum(nbytes(v) for v in kwargs.values()) + nbytes(out)
            checked += 1
            if w[2] != expected:
                failures.append(f"{formulas.op_name(func)}: bytes {w[2]}, inputs + outputs are {expected}")
            # The stores are the outputs: they pick the stream kernel whose roof judges the op.
            checked += 1
            if w[5] != nbytes(out):
                failures.append(f"{formulas.op_name(func)}: written {w[5]}, outputs are {nbytes(out)}")
        return out


def expect(name, got, want):
    global checked
    checked += 1
    if got != want:
        failures.append(f"{name}: {got}, expected {want}")


def run(fn):
    with Check() as c:
        fn()
    return c.calls


def only(calls, op):
    works = [w for n, w in calls if n == op]
    if len(works) != 1:
        failures.append(f"expected one {op}, saw {[n for n, _ in calls]}")
        return ("?", -1, -1, None)
    return works[0]


x = torch.randn(2, 16, 32, 32)
# Convolutions: dense, depthwise, pointwise, grouped, strided and dilated, transposed.
cases = [
    ("dense 3x3", lambda: F.conv2d(x, torch.randn(32, 16, 3, 3), padding=1), "conv dense",
     2 * 2 * 32 * 32 * 32 * 16 * 9),
    ("depthwise 3x3", lambda: F.conv2d(x, torch.randn(16, 1, 3, 3), padding=1, groups=16),
     "conv depthwise", 2 * 2 * 16 * 32 * 32 * 9),
    ("depthwise x2", lambda: F.conv2d(x, torch.randn(32, 1, 3, 3), padding=1, groups=16),
     "conv depthwise", 2 * 2 * 32 * 32 * 32 * 9),
    ("pointwise", lambda: F.conv2d(x, torch.randn(64, 16, 1, 1), torch.randn(64)), "conv pointwise",
     2 * 2 * 64 * 32 * 32 * 16 + 2 * 64 * 32 * 32),
    ("grouped", lambda: F.conv2d(x, torch.randn(32, 4, 3, 3), groups=4), "conv grouped",
     2 * 2 * 32 * 30 * 30 * 4 * 9),
    ("strided dilated", lambda: F.conv2d(x, torch.randn(8, 16, 3, 3), stride=2, padding=2, dilation=2),
     "conv dense", 2 * 2 * 8 * 16 * 16 * 16 * 9),
    ("transposed", lambda: F.conv_transpose2d(x, torch.randn(16, 8, 4, 4), stride=2, padding=1),
     "conv transposed", 2 * 2 * 16 * 32 * 32 * 8 * 16),
    ("conv1d", lambda: F.conv1d(torch.randn(1, 4, 100), torch.randn(6, 4, 5)), "conv dense",
     2 * 6 * 96 * 4 * 5),
]
for name, fn, cls, ops in cases:
    w = only(run(fn), "aten.convolution")
    expect(f"{name} class", w[0], cls)
    expect(f"{name} ops", w[1], ops)

# Matrix products: mm, bmm, addmm (a Linear on 2-D input), matmul broadcasting, 3-D linear.
a, b = torch.randn(64, 128), torch.randn(128, 32)
expect("mm ops", only(run(lambda: a @ b), "aten.mm")[1], 2 * 64 * 128 * 32)
expect("bmm ops", only(run(lambda: torch.bmm(torch.randn(3, 8, 5), torch.randn(3, 5, 7))), "aten.bmm")[1],
       2 * 3 * 8 * 5 * 7)
lin = torch.nn.Linear(128, 10)
with torch.no_grad():
    w = only(run(lambda: lin(a)), "aten.addmm")
expect("addmm class", w[0], "linear")
expect("addmm ops", w[1], 2 * 64 * 128 * 10 + 64 * 10)
calls = run(lambda: torch.matmul(torch.randn(4, 1, 8, 5), torch.randn(3, 5, 6)))
expect("matmul broadcast ops", sum(w[1] for n, w in calls if w and w[0] == "matmul"), 2 * 12 * 8 * 5 * 6)

# Norms, softmax, pooling (ceil mode), interpolation by size and by scale, reductions.
bn = torch.nn.BatchNorm2d(16).eval()
with torch.no_grad():
    expect("batch norm eval ops", only(run(lambda: bn(x)), "aten.native_batch_norm")[1], 2 * x.numel())
expect("softmax ops", only(run(lambda: torch.softmax(x, 1)), "aten._softmax")[1], 5 * x.numel())
run(lambda: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))
run(lambda: F.max_pool2d(torch.randn(1, 2, 7, 7), 2, ceil_mode=True))
run(lambda: F.avg_pool2d(x, 2))
run(lambda: F.adaptive_avg_pool2d(x, (5, 7)))
run(lambda: F.interpolate(x, size=(50, 40), mode="bilinear", align_corners=False))
run(lambda: F.interpolate(x, scale_factor=2.5, mode="nearest"))
run(lambda: F.interpolate(x, scale_factor=0.5, mode="bicubic", align_corners=False))
run(lambda: x.sum(dim=(2, 3), keepdim=True))
run(lambda: x.mean(1))
run(lambda: x.amax(-1))
run(lambda: torch.max(x, 1))
run(lambda: x + torch.randn(16, 1, 1))
run(lambda: torch.cat([x, x], 1))
run(lambda: F.pad(x, (1, 2, 3, 4)))
run(lambda: F.relu(x) * 2 + x.sigmoid())
# where takes its output and precision from its values, not the bool condition; argmax writes
# int64 indices; binary_cross_entropy_with_logits's reduction comes after pos_weight;
# scalar_tensor is one element of its dtype.
cond = x > 0
where = [w for n, w in run(lambda: torch.where(cond, x, -x)) if n.startswith("aten.where")]
expect("where calls", len(where), 1)
if where:
    expect("where precision", where[0][4], "fp32")
run(lambda: x.argmax(1))
target, pos_weight = torch.rand_like(x), torch.rand(32)
run(lambda: F.binary_cross_entropy_with_logits(x, target, pos_weight=pos_weight, reduction="none"))
run(lambda: F.binary_cross_entropy_with_logits(x, target))
scalar = [w for n, w in run(lambda: torch.scalar_tensor(3.0)) if n.startswith("aten.scalar_tensor")]
expect("scalar_tensor bytes", scalar[0][2] if scalar else None, 4)
up = only(run(lambda: F.interpolate(x, size=(64, 64), mode="bilinear")), "aten.upsample_bilinear2d.vec")
expect("bilinear ops", up[1], 2 * 4 * 2 * 16 * 64 * 64)

# In place: the compulsory bytes read and write the tensor, its working set counts it once.
y = torch.randn(4, 1000)
w = only(run(lambda: y.relu_()), "aten.relu_")
expect("in-place bytes", w[2], 2 * 4000 * 4)
expect("in-place working set", w[3], 4000 * 4)
expect("in-place written", w[5], 4000 * 4)

# Training: convolution_backward costs the forward's multiply-adds twice (input and weight
# gradients); the gradients of batch norm and activations have their own rows.
xg, wg = torch.randn(2, 16, 32, 32, requires_grad=True), torch.randn(32, 16, 3, 3, requires_grad=True)
calls = run(lambda: F.relu(F.conv2d(xg, wg, padding=1)).sum().backward())
cb = only(calls, "aten.convolution_backward")
expect("conv backward class", cb[0], "conv dense backward")
expect("conv backward ops", cb[1], 2 * 2 * (2 * 32 * 32 * 32 * 16 * 9))
expect("relu backward class", only(calls, "aten.threshold_backward")[0], "activation backward")

# Fused attention (inference fast paths): a whole TransformerEncoderLayer in one op, and
# MultiheadAttention's; hand-computed multiply-adds of every projection, the scores and the
# softmax, the norms and the feed-forward network.
B, L, D, H, F_ = 2, 10, 64, 4, 128
layer = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=F_, batch_first=True).eval()
src = torch.randn(B, L, D)
with torch.no_grad():
    calls = run(lambda: layer(src))
fused = [w for n, w in calls if n == "aten._transformer_encoder_layer_fwd"]
if fused:  # the fast path (PyTorch 1.12 on; some builds decompose it)
    T = B * L
    want = (2 * T * D * 3 * D + 3 * T * D + 4 * T * L * D + 5 * B * H * L * L + 2 * T * D * D + T * D
            + 2 * T * D + 14 * T * D + 2 * T * D * F_ + F_ * T + T * F_ + 2 * T * F_ * D + T * D)
    expect("encoder layer ops", fused[0][1], want)
    params = sum(p.numel() * 4 for p in layer.parameters())
    expect("encoder layer bytes", fused[0][2], 2 * src.numel() * 4 + params)
    expect("encoder layer class", fused[0][0], "transformer layer")
mha = torch.nn.MultiheadAttention(D, H, batch_first=True).eval()
with torch.no_grad():
    calls = run(lambda: mha(src, src, src, need_weights=False))
fused = [w for n, w in calls if n == "aten._native_multi_head_attention"]
if fused:
    T = B * L
    expect("attention ops", fused[0][1],
           2 * T * 3 * D * D + 3 * T * D + 4 * T * L * D + 5 * B * H * L * L + 2 * T * D * D + T * D)

# Random fills, ranges, repeats, scans and losses: their bytes by the in + out check above,
# their operations by hand.
run(lambda: torch.randn(3, 4))
run(lambda: torch.randint(0, 9, (5, 2)))
expect("arange ops", only(run(lambda: torch.arange(2, 11, 3)), "aten.arange.start_step")[1], 3)
run(lambda: torch.randn(2, 3).repeat(2, 1, 2))
expect("cumsum ops", only(run(lambda: torch.cumsum(x, 1)), "aten.cumsum")[1], x.numel())
run(lambda: torch.cummax(x, 1))
expect("mse ops", only(run(lambda: F.mse_loss(x, x * 2)), "aten.mse_loss")[1], 3 * x.numel())
bag = torch.nn.EmbeddingBag(100, 16)
with torch.no_grad():
    w = only(run(lambda: bag(torch.randint(0, 100, (8, 5)))), "aten._embedding_bag")
expect("embedding bag ops", w[1], 8 * 5 * 16)
expect("embedding bag class", w[0], "gather")
# Rows picked by an integer index: what it writes is the real output; a mask has no formula.
table = torch.randn(50, 8)
idx = torch.tensor([[1, 3], [4, 4]])
picked = only(run(lambda: table[idx]), "aten.index.Tensor")
expect("index written", picked[5], table[idx].numel() * 4)
expect("index by mask has no formula",
       [w for n, w in run(lambda: table[table[:, 0] > 0]) if n == "aten.index.Tensor"], [None])
# A recurrent layer splits its gates with unsafe_split: views, no data moved.
calls = run(lambda: torch.nn.GRU(8, 4)(torch.randn(3, 1, 8)))
expect("unsafe_split is a view", {w[0] for n, w in calls if n == "aten.unsafe_split.Tensor"},
       {"view (no data moved)"})

# No formula: listed as such, never a number.
calls = run(lambda: torch.nonzero(x > 0))
expect("nonzero has no formula", [w for n, w in calls if n == "aten.nonzero"], [None])

for f in failures:
    print("FAIL", f)
print(f"{checked} checks, {len(failures)} failed")
sys.exit(1 if failures else 0)
