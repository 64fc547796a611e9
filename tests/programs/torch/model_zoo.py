"""A model zoo: the matrix products ceiling counts for whole models, each within 1 % of an
independent count. Runs ceiling's instrumentation in this process (its ranges recorded
instead of sent to NVTX, as training_checks.py does), on torch 1.13 and 2.x.

Models (random weights: nothing is downloaded), each measured on its first call, which
ceiling instruments op by op (a model's second, fourth, ... calls run bare: modules.py):

- torchvision CNNs, batch 1 at 224x224: mobilenet_v2, resnet18, efficientnet_b0,
  convnext_tiny; and vit_b_16 (one forward each, under no_grad);
- an eval-mode nn.TransformerEncoderLayer (batch_first, d_model 256, 8 heads, the default
  feed-forward 2048, 128 tokens, under no_grad: torch's fused inference path where it takes it);
- a GPT-style decoder block (pre-norm, d_model 512, 8 heads of 64, MLP 4x) written with
  F.scaled_dot_product_attention: a prefill of 256 tokens (is_causal=True) that writes its
  keys and values into a preallocated cache with index_put_ (`cache[:, :, positions] = k`),
  then one KV-cache decode step (1 new token written at position 256, attending to the 257
  cached keys); torch 2.x only (1.13 has no F.scaled_dot_product_attention);
- training steps, forward + backward + AdamW's step: a Linear+ReLU MLP (both torches) and
  the decoder block at 128 tokens, batch 2 (torch 2.x).

What is compared: ceiling's ops of the matrix-product classes (conv*, linear, matmul,
attention*, transformer layer) under the model's ranges (the model call, and for training
its backward and optimizer step), against an independent count of the matrix products,
2 per multiply-add, plus the bias adds of Conv2d and Linear layers (which ceiling's conv
and linear ops include). The independent count is:

- torch.utils.flop_counter.FlopCounterMode (torch 2.x) where it sees every product: the
  CNNs, the MLP's training step, the decoder block's linear layers; plus the bias adds,
  counted by hand from forward hooks (FlopCounterMode counts none);
- by hand where it does not: FlopCounterMode has no formula for the CPU's fused attention
  (_scaled_dot_product_flash_attention_for_cpu, forward and backward), nor for
  nn.MultiheadAttention's and TransformerEncoderLayer's fused inference ops, so attention
  is counted from the shapes: Q K^T and P V are 4 * d operations per (query, key) pair and
  head of size d, over L*S pairs, or L(L+1)/2 for causal attention with L = S (torch's mask
  aligned top-left); its backward's five products (the scores recomputed, dP, dV, dQ, dK)
  are 2.5x the forward's. The ViT (its MultiheadAttention) and the encoder layer are counted
  wholly by hand, as is everything on torch 1.13, which has no FlopCounterMode: forward
  hooks over nn.Conv2d (2 * Cout * Hout * Wout * Cin/groups * kh * kw per image),
  nn.Linear (2 * in * out per token) and nn.MultiheadAttention.

What differs is not products, and stays within the 1 %: ceiling's fused attention ops
count their softmax too (5 per score; the backward 6 per score and 2 per output element),
the fused encoder layer its norms, residual adds and ReLU (0.4 %); torch 1.13 runs a Linear
on a 4-D input (ConvNeXt's) as a product and a separate bias add, an elementwise op (0.12 %
short, said in a note). Each model's ops must all have a formula (one without is not
counted, and fails), and the model call measured must be instrumented.

Prints one line per model, "model: ceiling X FLOP, independent Y FLOP (source), ratio R:
PASS" (or FAIL), SKIP lines naming the torch version where a model does not exist there, and
"N checks, M failed"; exits 1 on any failure. A few seconds per torch on one thread.
Usage: PYTHONPATH=<build>/agent/torch python3 model_zoo.py"""
import os
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from range_tree import Recorder  # beside this script

TOLERANCE = 0.01
failures = []
checked = 0


# --- ceiling's count: its ranges, recorded ------------------------------------------------

OP_RANGE = re.compile(r"^(\S+) \[(.+)\] \{ops=(\d+) ")


def matrix_class(cls):
    return (cls in ("linear", "matmul", "transformer layer")
            or cls.startswith("conv") or cls.startswith("attention"))


def walk(node, totals, unformulated):
    for child in node.children:
        m = OP_RANGE.match(child.name)
        if m:
            cls = m.group(2)
            # torch 1.13 runs a Linear on a 3-D or 4-D input as a product and a separate bias
            # add: an elementwise op, not a product (counted apart to say so).
            if cls == "elementwise" and node.name.endswith("(Linear)") and m.group(1).startswith("aten.add"):
                cls = "Linear's bias add, apart"
            totals[cls] = totals.get(cls, 0) + int(m.group(3))
        elif child.name.endswith(" [no formula]"):
            unformulated.add(child.name[: -len(" [no formula]")])
        walk(child, totals, unformulated)


def ceiling_count(root):
    """(matrix-product ops under the model's ranges, ops of every class there, the ops
    without a formula, the model ranges' names)."""
    models = [n for n in root.children if n.name.endswith(("(model)", "(model step)"))]
    totals, unformulated = {}, set()
    for n in models:
        walk(n, totals, unformulated)
    matrix = sum(v for k, v in totals.items() if matrix_class(k))
    return matrix, totals, unformulated, [n.name for n in root.children]


# --- the independent counts ---------------------------------------------------------------

class Hooks:
    """Matrix products and bias adds by hand, from forward hooks over the model's Conv2d,
    Linear and MultiheadAttention modules (their shapes, nothing of ceiling's)."""

    def __init__(self, model):
        self.products = 0
        self.biases = 0
        self.handles = []
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                self.handles.append(m.register_forward_hook(self.conv))
            elif isinstance(m, nn.Linear):
                self.handles.append(m.register_forward_hook(self.linear))
            elif isinstance(m, nn.MultiheadAttention):
                self.wrap_mha(m)

    def remove(self):
        for h in self.handles:
            h.remove()

    def conv(self, m, _inputs, out):
        n, c_out, h, w = out.shape
        kh, kw = m.kernel_size
        self.products += 2 * n * c_out * h * w * (m.in_channels // m.groups) * kh * kw
        self.biases += out.numel() if m.bias is not None else 0

    def linear(self, m, _inputs, out):
        tokens = out.numel() // m.out_features
        self.products += 2 * tokens * m.in_features * m.out_features
        self.biases += out.numel() if m.bias is not None else 0

    def wrap_mha(self, m):
        """torch 1.13's forward hooks get no keyword arguments (ViT passes query= and key=):
        the module's forward is wrapped instead, and unwrapped by remove()."""
        forward = m.forward

        def counted(*args, **kwargs):
            names = ("query", "key")
            q, k = (kwargs[n] if n in kwargs else args[i] for i, n in enumerate(names))
            self.mha(m, q, k)
            return forward(*args, **kwargs)
        m.forward = counted
        self.handles.append(_Unwrap(m))

    def mha(self, m, q, k):
        # [B, L, E] batch first (or [L, B, E]): the in-projection of query, key and value,
        # attention over all heads (4 * E per pair, E the sum of the heads' sizes), the
        # out-projection (a Linear never called as a module: its weight is passed to the
        # functional form or the fused op).
        (b, length), s = ((q.shape[0], q.shape[1]), k.shape[1]) if m.batch_first else (
            (q.shape[1], q.shape[0]), k.shape[0])
        e = m.embed_dim
        self.products += 2 * b * (length + 2 * s) * e * e + 4 * b * length * s * e + 2 * b * length * e * e
        if m.in_proj_bias is not None:
            self.biases += b * (length + 2 * s) * e
        if m.out_proj.bias is not None:
            self.biases += b * length * e


class _Unwrap:
    def __init__(self, module):
        self.module = module

    def remove(self):
        del self.module.forward  # the instance's wrapper: its class's forward again


def causal_pairs(length):
    """The (query, key) pairs torch's is_causal keeps for L queries over L keys: L(L+1)/2."""
    return length * (length + 1) // 2


def flop_counter_products(run):
    """FlopCounterMode's count of one run, leaving out any attention op (counted by hand
    instead, as FlopCounterMode has no formula for the CPU's fused kernels); None without
    FlopCounterMode (torch 1.13)."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    with FlopCounterMode(display=False) as counter:
        run()
    per_op = counter.get_flop_counts().get("Global", {})
    return sum(v for op, v in per_op.items() if "attention" not in str(op))


# --- checks -------------------------------------------------------------------------------

def compare(name, ceiling, independent, source, unformulated, note=""):
    global checked
    checked += 1
    ratio = ceiling / independent if independent else float("inf")
    ok = abs(ratio - 1) <= TOLERANCE
    print(f"{name}: ceiling {ceiling} FLOP, independent {independent} FLOP ({source}), "
          f"ratio {ratio:.4f}: {'PASS' if ok else 'FAIL'}")
    if note:
        print(f"     {note}")
    if not ok:
        failures.append(name)
    # A model's work is whole only when each of its ops has a formula: one without is not
    # counted (never 0), and a product among them would read short.
    checked += 1
    if unformulated:
        failures.append(f"{name}: ops without a formula")
        print(f"FAIL {name}: ops without a formula under the model (not counted): "
              f"{', '.join(sorted(unformulated))}")


def measure(recorder, model, run):
    """ceiling's matrix products in one instrumented run, and the hooks' count of it (no
    hooks where model is None: hooks turn TransformerEncoderLayer's fused path off)."""
    hooks = Hooks(model if model is not None else nn.Module())
    recorder.root.children.clear()
    try:
        run()
    finally:
        hooks.remove()
    matrix, totals, unformulated, tops = ceiling_count(recorder.root)
    bare = [t for t in tops if "uninstrumented" in t]
    if bare or not any(t.endswith("(model)") for t in tops):
        global checked
        checked += 1
        failures.append(f"ranges {tops}")
        print(f"FAIL the run was not instrumented: top-level ranges {tops}")
    return matrix, totals, unformulated, hooks


def skip(what, why):
    print(f"SKIP {what}: torch {torch.__version__} {why}")


def check_torchvision(recorder):
    try:
        import torchvision
    except ImportError as e:
        skip("torchvision models", f"has no torchvision here ({e})")
        return
    x = torch.randn(1, 3, 224, 224)
    for name in ("mobilenet_v2", "resnet18", "efficientnet_b0", "convnext_tiny", "vit_b_16"):
        build = getattr(torchvision.models, name, None)
        if build is None:
            skip(name, f"with torchvision {torchvision.__version__} has no such model")
            continue
        torch.manual_seed(0)
        model = build(weights=None).eval()

        def forward():
            with torch.no_grad():
                model(x)
        matrix, totals, unformulated, hooks = measure(recorder, model, forward)
        counted = None if name == "vit_b_16" else flop_counter_products(forward)
        apart = totals.get("Linear's bias add, apart", 0)
        note = (f"{apart} of the Linear layers' bias adds ran as separate adds (elementwise, "
                f"not counted as products)" if apart else "")
        if counted is None:  # ViT's fused attention, or torch 1.13: by hand
            compare(name, matrix, hooks.products + hooks.biases,
                    "by hand: Conv2d, Linear and MultiheadAttention hooks", unformulated, note)
        else:
            compare(name, matrix, counted + hooks.biases, "FlopCounterMode + bias adds by hand",
                    unformulated, note)


def check_encoder_layer(recorder):
    d, heads, ff, length = 256, 8, 2048, 128
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d, heads, batch_first=True).eval()
    assert layer.linear1.out_features == ff
    x = torch.randn(1, length, d)

    def forward():
        with torch.no_grad():
            layer(x)
    matrix, totals, unformulated, _ = measure(recorder, None, forward)
    # q, k, v projections, attention over all heads, out-projection, the two ffn layers.
    products = (2 * length * d * 3 * d + 4 * length * length * d + 2 * length * d * d
                + 2 * 2 * length * d * ff)
    biases = length * (3 * d + d + ff + d)
    fused = "transformer layer" in totals
    compare("TransformerEncoderLayer", matrix, products + biases, "by hand from its shapes", unformulated,
            "torch's fused path (_transformer_encoder_layer_fwd): its count includes its norms, "
            "softmax, residuals and ReLU" if fused else "")


class Block(nn.Module):
    """A GPT-style pre-norm decoder block with a preallocated KV cache."""

    def __init__(self, d=512, heads=8, max_len=512):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("k_cache", torch.zeros(1, heads, max_len, d // heads))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_len, d // heads))

    def forward(self, x, pos=None):
        """x [B, T, d]; pos: where x's tokens go in the cache (None: no cache, training)."""
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        if pos is not None:
            positions = torch.arange(pos, pos + t)
            self.k_cache[:, :, positions] = k  # aten.index_put_
            self.v_cache[:, :, positions] = v
            k, v = self.k_cache[:, :, : pos + t], self.v_cache[:, :, : pos + t]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def block_products(block, tokens, biased=True):
    """The block's linear layers by hand: products (and bias adds) for `tokens` tokens."""
    layers = (block.qkv, block.proj, block.fc1, block.fc2)
    products = sum(2 * tokens * m.in_features * m.out_features for m in layers)
    return products + (sum(tokens * m.out_features for m in layers) if biased else 0)


def check_decoder(recorder):
    if not hasattr(F, "scaled_dot_product_attention"):
        skip("decoder block prefill, decode and training step", "has no F.scaled_dot_product_attention")
        return
    torch.manual_seed(0)
    block = Block().eval()
    hd = block.d // block.heads
    prompt, token = torch.randn(1, 256, block.d), torch.randn(1, 1, block.d)
    # Calls 0 and 2 are measured (a model's even calls are instrumented), 1 and 3 FlopCounterMode's.
    for name, x, pos, pairs in (("decoder block prefill (256 tokens, causal)", prompt, 0, causal_pairs(256)),
                                ("decoder block decode (1 token, 256 cached)", token, 256, 257)):
        def forward():
            with torch.no_grad():
                block(x, pos)
        matrix, totals, unformulated, hooks = measure(recorder, block, forward)
        attention = 4 * block.heads * pairs * hd
        counted = flop_counter_products(forward)
        expect_scatter = "scatter" in totals
        compare(name, matrix, counted + hooks.biases + attention,
                "FlopCounterMode + bias adds + attention by hand", unformulated,
                "" if expect_scatter else "the cache was not written by a counted index_put_")
        expect("the cache written by an index_put_ with a formula", expect_scatter, True)
        # Independent of FlopCounterMode: the linear layers by hand too.
        expect(f"{name}: hooks' linear products agree with the block's shapes",
               hooks.products + hooks.biases, block_products(block, x.shape[1]))

    # One training step at 128 tokens, batch 2: forward, backward, AdamW's step.
    torch.manual_seed(0)
    block = Block()
    optimizer = torch.optim.AdamW(block.parameters())
    x = torch.randn(2, 128, block.d)

    def train():
        block(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
    matrix, totals, unformulated, hooks = measure(recorder, block, train)
    attention = 4 * 2 * block.heads * causal_pairs(128) * hd
    counted = flop_counter_products(train)
    compare("decoder block training step (batch 2, 128 tokens, AdamW)", matrix,
            counted + hooks.biases + attention + int(2.5 * attention),
            "FlopCounterMode + bias adds + attention forward and backward by hand", unformulated,
            f"ceiling by class: {class_summary(totals)}")


def check_mlp_training(recorder):
    layers, batch = [(64, 256), (256, 256), (256, 10)], 32
    torch.manual_seed(0)
    mods = []
    for n, (i, o) in enumerate(layers):
        mods += [nn.Linear(i, o)] + ([nn.ReLU()] if n + 1 < len(layers) else [])
    model = nn.Sequential(*mods)
    optimizer = torch.optim.AdamW(model.parameters())
    x, y = torch.randn(batch, layers[0][0]), torch.randint(0, layers[-1][1], (batch,))

    def train():
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
    matrix, totals, unformulated, hooks = measure(recorder, model, train)
    counted = flop_counter_products(train)
    if counted is None:
        # Forward 2*B*in*out a layer and its bias; backward the weight gradient of each and
        # the input gradient of all but the first (its input needs none).
        products = [2 * batch * i * o for i, o in layers]
        independent = sum(products) * 2 + sum(products[1:]) + sum(batch * o for _, o in layers)
        compare("MLP training step (AdamW)", matrix, independent, "by hand from its shapes", unformulated)
    else:
        compare("MLP training step (AdamW)", matrix, counted + hooks.biases,
                "FlopCounterMode + bias adds by hand", unformulated)
    expect("the MLP's optimizer step is a model range", any(
        n.name == "AdamW.step (model step)" for n in recorder.root.children), True)


def class_summary(totals):
    return ", ".join(f"{k} {v}" for k, v in sorted(totals.items()) if matrix_class(k))


def expect(what, got, want):
    global checked
    checked += 1
    if got != want:
        failures.append(what)
        print(f"FAIL {what}: {got}, expected {want}")


def main():
    from ceiling_torch import modules, nvtx
    recorder = Recorder()
    nvtx.push, nvtx.pop, nvtx.mark = recorder.push, recorder.pop, lambda _m: None
    if torch.nn.Module.__call__ is not modules._call:  # not already installed by sitecustomize
        # The dispatch mode, whose ranges go through nvtx.push (the recorder); the op
        # observer's go from C++. observer_checks.py holds the observer to the mode's ops.
        os.environ["CEILING_TORCH_OPS"] = "mode"
        modules.install()
    torch.set_num_threads(1)
    start = time.time()
    print(f"torch {torch.__version__}, 1 thread; ceiling's matrix products against an independent count, "
          f"within {TOLERANCE:.0%}")
    check_torchvision(recorder)
    check_encoder_layer(recorder)
    check_decoder(recorder)
    check_mlp_training(recorder)
    print(f"{checked} checks, {len(failures)} failed ({time.time() - start:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
