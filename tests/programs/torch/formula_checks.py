"""Checks ceiling_torch's op formulas against torch itself, without ceiling: for a battery of
ops the formula's bytes must equal the bytes of the real inputs plus the real outputs (so its
output shapes are right), and hand-computed FLOPs and classes must match. Prints one line
per failure and exits 1 on any (tests/integration/torch/torch_run_test.cpp runs it). Runs on torch
1.13 and 2.x: where an op or a fast path does not exist on this torch, a SKIP line names the
version, and the path this torch takes instead is still checked.
Usage: PYTHONPATH=<build>/agent/torch python3 formula_checks.py"""
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from ceiling_torch import formulas, formulas_indexing, formulas_training

failures = []
checked = 0
warnings.filterwarnings("ignore", message="scatter_reduce")  # 1.13: "in beta"

# Families whose compulsory bytes are exactly the inputs read plus the outputs written.
IN_PLUS_OUT = {formulas._pointwise, formulas._matmul, formulas._addmm, formulas._linear,
               formulas._conv, formulas._softmax, formulas._pool, formulas._adaptive_pool,
               formulas._upsample, formulas._reduce, formulas._concat, formulas._pad,
               formulas._random, formulas._arange, formulas._repeat, formulas._scan,
               formulas._loss, formulas._grid_sample, formulas_training._foreach,
               formulas_training._embedding_backward, formulas_indexing._scatter}


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
        self.io = {}  # op name -> the real bytes (inputs, outputs) of its last call

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        global checked
        kwargs = kwargs or {}
        entry = formulas.lookup(func)
        w = formulas.work(entry, args, kwargs)
        out = func(*args, **kwargs)
        self.calls.append((formulas.op_name(func), w))
        self.io[formulas.op_name(func)] = (
            sum(nbytes(a) for a in args) + sum(nbytes(v) for k, v in kwargs.items() if k != "out"),
            nbytes(out))
        if w is not None and entry[2] in IN_PLUS_OUT and not entry[1]:
            # an out= tensor is the output: written, not read
            expected = (sum(nbytes(a) for a in args) + sum(nbytes(v) for k, v in kwargs.items() if k != "out")
                        + nbytes(out))
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


def run_mode(fn):
    """The Check mode after fn ran: its calls and the real bytes of each op's inputs and outputs."""
    with Check() as c:
        fn()
    return c


def only(calls, op):
    """The work of the one call of op (its name, or the start of its name: overloads differ
    between torch versions); an op not seen fails, it never skips."""
    works = [w for n, w in calls if n == op or (op.endswith("*") and n.startswith(op[:-1]))]
    if len(works) != 1:
        failures.append(f"expected one {op}, saw {[n for n, _ in calls]}")
        return ("?", -1, -1, -1, None, -1)
    return works[0]


def summed(calls, classes=None):
    """The ops of every call with a formula (of these classes)."""
    return sum(w[1] for _, w in calls if w is not None and (classes is None or w[0] in classes))


def skip(what, why):
    print(f"SKIP {what}: torch {torch.__version__} {why}")


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
# upsample_bilinear2d.vec on 1.13, its default overload (a size) on 2.x.
up = only(run(lambda: F.interpolate(x, size=(64, 64), mode="bilinear")), "aten.upsample_bilinear2d*")
expect("bilinear ops", up[1], 2 * 4 * 2 * 16 * 64 * 64)
run(lambda: x.argmin(1))

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
if not fused:  # the fast path (PyTorch 1.12 on; some builds decompose it): said, never silent
    skip("the fused encoder layer", "ran no aten._transformer_encoder_layer_fwd (its ops: "
         + ", ".join(sorted({n for n, _ in calls})) + ")")
else:
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
if not fused:
    skip("fused multi-head attention", "ran no aten._native_multi_head_attention (its ops: "
         + ", ".join(sorted({n for n, _ in calls})) + ")")
else:
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

# --- Attention: torch 2.x's scaled_dot_product_attention kernels, forward and backward ------
# By hand, per head: Q K^T and P V cost 2*E and 2*Ev per kept (query, key) pair, the softmax
# 5 per score (1 more with an additive mask); causal attention keeps the pairs of torch's
# own top-left mask, counted here from that mask. The backward: five products (the scores
# recomputed from Q and K, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q), 6 per score (P
# from the logsumexp: scale, subtract, exp; dS = P * (dP - D), scaled) and D = rowsum(dO * O)
# at 2 per output element.
def kept(rows, cols, causal):
    return int(torch.ones(rows, cols).tril().sum()) if causal else rows * cols


def sdpa_forward_ops(pairs, e, ev, masked=False):
    return 2 * pairs * e + 2 * pairs * ev + (5 + int(masked)) * pairs


def sdpa_backward_ops(pairs, e, ev, rows):
    return 2 * pairs * e + 2 * pairs * ev + 2 * pairs * ev + 2 * pairs * e + 2 * pairs * e + 6 * pairs + 2 * rows * ev


FLASH_CPU = "aten._scaled_dot_product_flash_attention_for_cpu"


def check_sdpa_cpu():
    B, H, E = 2, 3, 8
    for causal in (False, True):
        for L, S in ((6, 6), (4, 10)):
            tag = f"sdpa cpu L={L} S={S}{' causal' if causal else ''}"
            q = torch.randn(B, H, L, E, requires_grad=True)
            k, v = torch.randn(B, H, S, E, requires_grad=True), torch.randn(B, H, S, E, requires_grad=True)
            c = run_mode(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal).sum().backward())
            pairs = B * H * kept(L, S, causal)
            w = only(c.calls, FLASH_CPU)
            expect(f"{tag} ops", w[1], sdpa_forward_ops(pairs, E, E))
            # bytes: every input read, the attention and each row's logsumexp written
            expect(f"{tag} bytes", w[2], sum(c.io.get(FLASH_CPU, (0, 0))))
            expect(f"{tag} written", w[5], c.io.get(FLASH_CPU, (0, 0))[1])
            b = only(c.calls, FLASH_CPU + "_backward")
            expect(f"{tag} backward ops", b[1], sdpa_backward_ops(pairs, E, E, B * H * L))
            expect(f"{tag} backward bytes", b[2], sum(c.io.get(FLASH_CPU + "_backward", (0, 0))))
            expect(f"{tag} backward class", b[0], "attention backward")
    q, k, v = torch.randn(B, H, 5, E), torch.randn(B, H, 7, E), torch.randn(B, H, 7, E)
    mask = torch.randn(5, 7)
    c = run_mode(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    w = only(c.calls, FLASH_CPU)
    expect("sdpa cpu float mask ops", w[1], sdpa_forward_ops(B * H * 5 * 7, E, E, masked=True))
    expect("sdpa cpu float mask bytes", w[2], sum(c.io.get(FLASH_CPU, (0, 0))))
    try:  # grouped-query attention: 4 query heads share 2 key and value heads
        q4, kv2 = torch.randn(B, 4, 5, E), torch.randn(B, 2, 7, E)
        c = run_mode(lambda: F.scaled_dot_product_attention(q4, kv2, kv2, enable_gqa=True))
    except TypeError as e:
        skip("sdpa enable_gqa", f"has no grouped-query attention ({e})")
    else:
        w = only(c.calls, FLASH_CPU)
        expect("sdpa gqa ops", w[1], sdpa_forward_ops(B * 4 * 5 * 7, E, E))
        expect("sdpa gqa bytes", w[2], sum(c.io.get(FLASH_CPU, (0, 0))))


def check_sdpa_gpu_kernels():
    # The GPU kernels, on meta tensors (shapes only): their formulas read each op's own
    # argument order. Written: the attention and L logsumexp values per head in fp32 (the
    # efficient kernel's buffer is padded to 32 rows: the padding is not counted).
    B, H, L, S, E, Ev = 2, 3, 5, 7, 8, 16
    a = torch.ops.aten
    meta = dict(device="meta")
    for causal in (False, True):
        pairs = B * H * kept(L, S, causal)
        for name, ev, fwd in (
                ("_scaled_dot_product_flash_attention", E, lambda q, k, v: a._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)),
                ("_scaled_dot_product_efficient_attention", Ev, lambda q, k, v: a._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal)),
                ("_scaled_dot_product_cudnn_attention", Ev, lambda q, k, v: a._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal))):
            tag = f"{name}{' causal' if causal else ''}"
            q, k, v = torch.empty(B, H, L, E, **meta), torch.empty(B, H, S, E, **meta), torch.empty(B, H, S, ev, **meta)
            try:
                with Check() as c:
                    outs = fwd(q, k, v)
                    grads = gpu_backward(name, outs, q, k, v, causal)
            except (RuntimeError, NotImplementedError, AttributeError) as e:
                skip(tag, f"cannot run it on meta tensors ({type(e).__name__}: {str(e)[:80]})")
                continue
            w = only(c.calls, f"aten.{name}")
            expect(f"{tag} ops", w[1], sdpa_forward_ops(pairs, E, ev))
            written = B * H * L * ev * 4 + B * H * L * 4
            expect(f"{tag} bytes", w[2], q.numel() * 4 + k.numel() * 4 + v.numel() * 4 + written)
            expect(f"{tag} written", w[5], written)
            b = only(c.calls, f"aten.{name}_backward")
            expect(f"{tag} backward ops", b[1], sdpa_backward_ops(pairs, E, ev, B * H * L))
            read = 4 * (B * H * L * ev + q.numel() + k.numel() + v.numel() + B * H * L * ev + outs[1].numel())
            expect(f"{tag} backward bytes", b[2], read + 4 * (q.numel() + k.numel() + v.numel()))
            expect(f"{tag} backward gradients", [tuple(g.shape) for g in grads[:3]],
                   [tuple(q.shape), tuple(k.shape), tuple(v.shape)])


def gpu_backward(name, outs, q, k, v, causal):
    a, out, lse = torch.ops.aten, outs[0], outs[1]
    grad, none = torch.empty_like(out), torch.empty(0, device="meta")
    if name == "_scaled_dot_product_flash_attention":
        return a._scaled_dot_product_flash_attention_backward(
            grad, q, k, v, out, lse, outs[2], outs[3], outs[4], outs[5], 0.0, causal, outs[6], outs[7])
    if name == "_scaled_dot_product_efficient_attention":
        return a._scaled_dot_product_efficient_attention_backward(
            grad, q, k, v, none, out, lse, outs[2], outs[3], 0.0, [True, True, True, False], causal)
    return a._scaled_dot_product_cudnn_attention_backward(
        grad, q, k, v, out, lse, outs[6], outs[7], none, outs[2], outs[3], outs[4], outs[5], 0.0, causal)


if hasattr(F, "scaled_dot_product_attention"):
    check_sdpa_cpu()
    check_sdpa_gpu_kernels()
else:
    skip("F.scaled_dot_product_attention and its fused kernels", "has none (2.0 on); its "
         "_scaled_dot_product_attention runs the math as one op instead, checked here")
    # 1.13 runs it as one math op that computes every score and masks the causal ones (1 a
    # score), returning the weights too.
    q, k, v = torch.randn(2, 3, 6, 8), torch.randn(2, 3, 9, 8), torch.randn(2, 3, 9, 8)
    for causal in (False, True):
        c = run_mode(lambda: F._scaled_dot_product_attention(q, k, v, None, 0.0, False, causal))
        op = "aten._scaled_dot_product_attention_forward"
        w = only(c.calls, op)
        expect(f"1.13 attention causal={causal} ops", w[1], sdpa_forward_ops(2 * 3 * 6 * 9, 8, 8, masked=causal))
        expect(f"1.13 attention causal={causal} bytes", w[2], sum(c.io.get(op, (0, 0))))
if hasattr(torch.ops.aten, "_safe_softmax"):  # 2.x's math attention path
    expect("_safe_softmax ops", only(run(lambda: torch.ops.aten._safe_softmax(x, -1)), "aten._safe_softmax")[1],
           5 * x.numel())

# --- The loss: cross_entropy is log_softmax then nll_loss ---------------------------------
# Per target: its class's log-probability picked and negated (1), weighted (1), summed (1
# unless reduction is none); the bytes: the targets, the picked elements (and weights), the
# loss and the total weight written. The backward writes the whole grad_input.
N, C = 16, 10
logp, target = torch.randn(N, C).log_softmax(1), torch.randint(0, C, (N,))
weight = torch.rand(C)
w = only(run(lambda: F.nll_loss(logp, target)), "aten.nll_loss_forward")
expect("nll_loss ops", w[1], 2 * N)
expect("nll_loss bytes", w[2], N * 8 + N * 4 + 4 + 4)
expect("nll_loss weighted ops", only(run(lambda: F.nll_loss(logp, target, weight=weight)), "aten.nll_loss_forward")[1],
       3 * N)
w = only(run(lambda: F.nll_loss(logp, target, reduction="none")), "aten.nll_loss_forward")
expect("nll_loss none ops, written", (w[1], w[5]), (N, N * 4 + 4))
lp = torch.randn(N, C, requires_grad=True)
calls = run(lambda: F.cross_entropy(lp, target).backward())
expect("cross_entropy forward ops", summed([c for c in calls if "backward" not in c[0]]), 5 * N * C + 2 * N)
w = only(calls, "aten.nll_loss_backward")
expect("nll_loss backward ops", w[1], 2 * N)  # negated and divided by the total weight
expect("nll_loss backward bytes", w[2], 4 + N * 8 + 4 + N * C * 4)
w = only(run(lambda: F.cross_entropy(torch.randn(2, C, 4, 5), torch.randint(0, C, (2, 4, 5)))),
         "aten.nll_loss2d_forward")
expect("nll_loss2d ops", w[1], 2 * 2 * 4 * 5)

# --- _foreach_ lists: each entry as its single-tensor op -----------------------------------
xs = [torch.randn(5, 7), torch.randn(13)]
ys, zs = [torch.randn(5, 7), torch.randn(13)], [torch.rand(5, 7) + 1, torch.rand(13) + 1]
n = 48
w = only(run(lambda: torch._foreach_mul_(xs, 0.9)), "aten._foreach_mul_.Scalar")
expect("_foreach_mul_ ops, bytes, working set, written", (w[1], w[2], w[3], w[5]), (n, 2 * n * 4, n * 4, n * 4))
w = only(run(lambda: torch._foreach_add_(xs, ys, alpha=0.5)), "aten._foreach_add_.List")
expect("_foreach_add_ alpha ops (a multiply-add), bytes", (w[1], w[2]), (2 * n, 3 * n * 4))
w = only(run(lambda: torch._foreach_addcdiv_(xs, ys, zs, 0.1)), "aten._foreach_addcdiv_.Scalar")
expect("_foreach_addcdiv_ ops, bytes", (w[1], w[2]), (3 * n, 4 * n * 4))
expect("_foreach_sqrt ops", only(run(lambda: torch._foreach_sqrt(zs)), "aten._foreach_sqrt")[1], n)
w = only(run(lambda: torch._foreach_norm(xs)), "aten._foreach_norm.Scalar")
expect("_foreach_norm ops, written, class", (w[1], w[5], w[0]), (2 * n, 2 * 4, "reduction"))
if hasattr(torch, "_foreach_lerp_"):
    w = only(run(lambda: torch._foreach_lerp_(xs, ys, 0.1)), "aten._foreach_lerp_.Scalar")
    expect("_foreach_lerp_ ops, bytes", (w[1], w[2]), (3 * n, 3 * n * 4))
else:
    skip("_foreach_lerp_", "has none (its Adam scales and adds instead, checked below)")
w = only(run(lambda: torch._foreach_zero_(xs)), "aten._foreach_zero_")
expect("_foreach_zero_ ops, bytes", (w[1], w[2]), (0, n * 4))

# --- Optimizers: each path this torch has on CPU counts the same update ---------------------
# By hand, per parameter element: AdamW 14 (decay 1, first moment 3, second moment 4,
# denominator 3, update 3), plus 1 per tensor for its step count; Adam with L2 decay and
# amsgrad 16 (the decay a multiply-add on the gradient, the running max 1); SGD with
# momentum, nesterov and decay 6 on its first step (decay 2, nesterov 2, update 2: the buffer
# starts as a copy of the gradient), 8 after (the buffer's b * m + g, 2).
PARAM_SHAPES = [(6, 5), (5,)]
P, T = 35, 2
OPTIMIZERS = [
    ("AdamW", lambda ps, **kw: torch.optim.AdamW(ps, **kw), [14 * P + T] * 2, "aten._fused_adamw_"),
    ("Adam(weight_decay, amsgrad)", lambda ps, **kw: torch.optim.Adam(ps, weight_decay=0.1, amsgrad=True, **kw),
     [16 * P + T] * 2, "aten._fused_adam_"),
    ("SGD(momentum, nesterov, weight_decay)",
     lambda ps, **kw: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, **kw),
     [6 * P, 8 * P], "aten._fused_sgd_"),
]


def optimizer_steps(make):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(s)) for s in PARAM_SHAPES]
    optimizer = make(params)
    steps = []
    for _ in range(2):
        for p in params:
            p.grad = torch.randn_like(p)
        steps.append(run(optimizer.step))
    return steps


for label, make, want, fused_op in OPTIMIZERS:
    for path, kwargs, op in (("single-tensor", {"foreach": False}, None),
                             ("foreach", {"foreach": True}, "aten._foreach_"),
                             ("fused", {"fused": True}, fused_op)):
        try:
            steps = optimizer_steps(lambda ps: make(ps, **kwargs))
        except (TypeError, RuntimeError, ValueError) as e:
            skip(f"{label} {path}", f"has no such CPU path ({type(e).__name__}: {e}); the others are checked")
            continue
        names = {n for calls in steps for n, _ in calls}
        expect(f"{label} {path} ops per step", [summed(calls) for calls in steps], want)
        expect(f"{label} {path} ops without a formula", sorted({n for calls in steps for n, w in calls if w is None}), [])
        fast = sorted(n for n in names if "_foreach_" in n or "_fused_" in n)
        if op is None:  # the single-tensor path runs neither list nor fused ops
            expect(f"{label} {path} list or fused ops", [n for n in fast if "_foreach_add_" not in n], [])
        else:
            expect(f"{label} {path} ran {op}*", any(n.startswith(op) for n in names), True)

# --- Indexing: a KV cache's write, accumulation, scatter -----------------------------------
cache, pos, k_new = torch.zeros(2, 3, 10, 4), torch.tensor([5]), torch.randn(2, 3, 1, 4)
w = only(run(lambda: cache.__setitem__((slice(None), slice(None), pos), k_new)), "aten.index_put_")
# the index (8 B), the new values read, the 24 positions written: not the whole cache
expect("KV cache write ops, bytes, written", (w[1], w[2], w[5]), (0, 8 + 96 + 96, 96))
table, rows, ones = torch.zeros(10, 3), torch.tensor([1, 1, 4]), torch.ones(3, 3)
w = only(run(lambda: table.index_put_((rows,), ones, accumulate=True)), "aten.index_put_")
expect("index_put_ accumulate ops, bytes, working set", (w[1], w[2], w[3]), (9, 24 + 36 + 36 + 36, 24 + 36 + 36))
picked = only(run(lambda: cache[:, :, pos]), "aten.index.Tensor")
expect("index on a later dimension written", picked[5], cache[:, :, pos].numel() * 4)
x0, idx, src = torch.zeros(4, 5), torch.randint(0, 5, (4, 3)), torch.randn(4, 3)
expect("scatter_add ops", only(run(lambda: x0.scatter_add(1, idx, src)), "aten.scatter_add")[1], 12)
expect("scatter ops", only(run(lambda: x0.scatter(1, idx, src)), "aten.scatter.src")[1], 0)
expect("scatter_reduce mean ops", only(run(lambda: x0.scatter_reduce(1, idx, src, "mean")), "aten.scatter_reduce.two")[1],
       12 + 20)
w = only(run(lambda: torch.zeros(4, 5).scatter_(1, idx, src)), "aten.scatter_.src")
expect("scatter_ in place bytes", w[2], 12 * 8 + 12 * 4 + 12 * 4)

# --- Gradients: embedding, pooling, interpolation, padding, dropout ------------------------
emb, ids = torch.nn.Embedding(100, 16), torch.randint(0, 100, (8, 5))
w = only(run(lambda: emb(ids).sum().backward()), "aten.embedding_dense_backward")
expect("embedding backward ops, class", (w[1], w[0]), (40 * 16, "gather backward"))
xg = torch.randn(2, 16, 32, 32, requires_grad=True)
grads = 2 * 16 * 32 * 32  # the input's elements, its gradient written at 4 B
for what, fn, op, ops, read in (
        ("max_pool2d", lambda: F.max_pool2d(xg, 2), "aten.max_pool2d_with_indices_backward",
         8192, 8192 * 4 + 8192 * 8),  # grad_output and its int64 indices
        ("avg_pool2d", lambda: F.avg_pool2d(xg, 2), "aten.avg_pool2d_backward", 8192 * (1 + 4), 8192 * 4),
        ("adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(xg, (4, 4)), "aten._adaptive_avg_pool2d_backward",
         grads + 512, 512 * 4),
        ("bilinear", lambda: F.interpolate(xg, size=(64, 64), mode="bilinear"), "aten.upsample_bilinear2d_backward*",
         8 * 2 * 16 * 64 * 64, 2 * 16 * 64 * 64 * 4),
        ("nearest", lambda: F.interpolate(xg, scale_factor=2, mode="nearest"), "aten.upsample_nearest2d_backward*",
         2 * 16 * 64 * 64, 2 * 16 * 64 * 64 * 4),
        ("reflection pad", lambda: F.pad(xg, (1, 2, 3, 4), mode="reflect"), "aten.reflection_pad2d_backward",
         2 * 16 * 39 * 35 - grads, 2 * 16 * 39 * 35 * 4)):
    w = only(run(lambda: fn().sum().backward()), op)
    expect(f"{what} backward ops, bytes, written", (w[1], w[2], w[5]), (ops, read + grads * 4, grads * 4))
out, keep = torch.ops.aten.native_dropout(x, 0.5, True)
w = only(run(lambda: torch.ops.aten.native_dropout_backward(out, keep, 2.0)), "aten.native_dropout_backward")
expect("dropout backward ops, class", (w[1], w[0]), (2 * x.numel(), "elementwise"))

# --- Forward ops: Linear with its activation fused, mirrored padding, grid sampling -------
bias, a2, b2 = torch.randn(10), torch.randn(64, 128), torch.randn(128, 10)
for gelu, act in ((True, 5), (False, 1)):
    w = only(run(lambda: torch._addmm_activation(bias, a2, b2, use_gelu=gelu)), "aten._addmm_activation")
    expect(f"_addmm_activation gelu={gelu} ops", w[1], 2 * 64 * 128 * 10 + 64 * 10 + act * 64 * 10)
for mode, op, t, pad in (("reflect", "aten.reflection_pad1d", torch.randn(2, 3, 10), (2, 3)),
                         ("reflect", "aten.reflection_pad2d", x, (1, 2, 3, 4)),
                         ("replicate", "aten.replication_pad2d", x, (1, 2, 3, 4)),
                         ("replicate", "aten.replication_pad3d", torch.randn(1, 2, 4, 5, 6), (1, 1, 1, 1, 1, 1))):
    expect(f"{op} ops", only(run(lambda: F.pad(t, pad, mode=mode)), op)[1], 0)  # bytes: in + out above
grid = torch.rand(2, 10, 12, 2) * 2 - 1
points = 2 * 10 * 12
for mode, taps in (("bilinear", 4), ("nearest", 0)):
    w = only(run(lambda: F.grid_sample(x, grid, mode=mode, align_corners=False)), "aten.grid_sampler_2d")
    expect(f"grid_sample {mode} ops", w[1], 2 * 2 * points + 2 * taps * 16 * points)

# No formula: listed as such, never a number.
calls = run(lambda: torch.nonzero(x > 0))
expect("nonzero has no formula", [w for n, w in calls if n == "aten.nonzero"], [None])

for f in failures:
    print("FAIL", f)
print(f"{checked} checks, {len(failures)} failed")
sys.exit(1 if failures else 0)
