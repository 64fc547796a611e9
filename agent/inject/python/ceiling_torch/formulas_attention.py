"""Attention: scaled_dot_product_attention's fused kernels forward and backward, and the fused
inference paths of nn.MultiheadAttention and nn.TransformerEncoderLayer.

torch 2.x runs F.scaled_dot_product_attention as one of several ops, by device and inputs:
_scaled_dot_product_flash_attention_for_cpu on CPUs, _flash_attention, _efficient_attention
or _cudnn_attention on GPUs (the math fallback decomposes into bmm and softmax, counted op by
op). Their arguments sit at different positions per op and per torch version (1.13's
_scaled_dot_product_attention had need_attn_weights where 2.x has is_causal), so these
formulas read them by the names of the op's own schema (_Call.get).

Causal attention (is_causal) keeps, as torch does, the scores of query i with keys 0..i: the
mask is aligned top-left (tril(ones(L, S))), so L queries over S keys keep
sum over i of min(i + 1, S) pairs, L(L+1)/2 = L*S - L*(L-1)/2 for a square L = S. The fused
kernels skip the masked blocks; the work counted is the kept pairs' (a block straddling the
diagonal costs a little more than counted).
"""
import math

from .formulas_common import _is_tensor, _nbytes, _arg, OPS_PER_ELEMENT

# Per score: the softmax's scale, max, subtract, exp, sum and divide, counted 5 as the
# _softmax family's rows are; an additive mask adds 1.
SOFTMAX_PER_SCORE = 5
# Per score of the backward: P recomputed from the saved logsumexp (scale, subtract, exp: 3)
# and dS = P * (dP - D) scaled (3), where D = rowsum(dO * O) costs 2 per output element.
SOFTMAX_BACKWARD_PER_SCORE = 6
# The ops that write each query row's logsumexp beside the output (saved for the backward):
# always, or where their compute_log_sumexp argument asks for it.
WRITES_LOGSUMEXP = {"_scaled_dot_product_flash_attention_for_cpu": True,
                    "_scaled_dot_product_flash_attention": True,
                    "_scaled_dot_product_efficient_attention": "compute_log_sumexp",
                    "_scaled_dot_product_cudnn_attention": "compute_log_sumexp"}
# The math implementations compute every score and mask the causal ones out (1 a score):
# causal attention saves them no work. 1.13's _scaled_dot_product_attention_forward returns
# the attention weights whatever need_attn_weights says: they are written.
MATH = {"scaled_dot_product_attention", "_scaled_dot_product_attention",
        "_scaled_dot_product_attention_math", "_scaled_dot_product_attention_forward"}
WRITES_WEIGHTS = {"_scaled_dot_product_attention_forward"}
SDPA_FORWARD = (*MATH, *WRITES_LOGSUMEXP)
SDPA_BACKWARD = tuple(f"{n}_backward" for n in WRITES_LOGSUMEXP)


def _attention_ops(pairs, e_qk, e_v):
    """Q K^T and the scores times V over `pairs` (query, key) pairs (summed over the batch and
    heads), e_qk and e_v the head sizes, or their sums over the heads where they are split.
    The softmax of the scores is the caller's: its scores are per head."""
    return 2 * pairs * e_qk + 2 * pairs * e_v


def causal_pairs(rows, cols):
    """The (query, key) pairs a top-left causal mask keeps: row i sees min(i + 1, cols) keys."""
    if rows <= cols:
        return rows * (rows + 1) // 2
    return cols * (cols + 1) // 2 + (rows - cols) * cols


def _geometry(c, q, k, v):
    """(batch, rows, pairs, e, ev, mask) of an SDPA call on [..., L, E] queries, [..., S, E]
    keys and [..., S, Ev] values; batch and heads from the queries (grouped-query attention
    shares fewer key and value heads among them)."""
    batch = math.prod(q.shape[:-2])
    rows, cols = q.shape[-2], k.shape[-2]
    skips = c.get("is_causal", False) and c.base not in MATH
    per_head = causal_pairs(rows, cols) if skips else rows * cols
    # The GPU kernels' backward takes its bias as a tensor always: an empty one is no bias.
    mask = c.get("attn_mask", c.get("attn_bias"))
    mask = mask if _is_tensor(mask) and mask.numel() > 0 else None
    return batch, rows, batch * per_head, q.shape[-1], v.shape[-1], mask


def _sdpa(c):
    # softmax(Q K^T * scale [+ mask]) V. Outputs: the attention, each row's logsumexp (fp32,
    # fp64 for fp64 inputs) where the op saves it, the weights where 1.13's need_attn_weights
    # asks for them. The GPU ops' random-number state (a few int64) is left out.
    q, k, v = c.args[0], c.args[1], c.args[2]
    batch, rows, pairs, e, ev, mask = _geometry(c, q, k, v)
    masked = mask is not None or (c.base in MATH and c.get("is_causal", False))
    ops = _attention_ops(pairs, e, ev) + (SOFTMAX_PER_SCORE + int(masked)) * pairs
    item = q.element_size()
    out = batch * rows * ev * item
    if c.get("need_attn_weights", False) or c.base in WRITES_WEIGHTS:
        out += batch * rows * k.shape[-2] * item
    lse = WRITES_LOGSUMEXP.get(c.base, False)
    if lse is True or (lse and c.get(lse, False)):
        out += batch * rows * max(4, item)
    read = _nbytes(q) + _nbytes(k) + _nbytes(v) + (_nbytes(mask) if mask is not None else 0)
    return ops, read + out, out


def _sdpa_backward(c):
    # The fused backward recomputes the scores from Q, K and the saved logsumexp (no L x S
    # matrix was kept), then dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q: five products,
    # three over the query-key size and two over the value size, as torch's own FlopCounterMode
    # counts them (sdpa_backward_flop_count). Reads grad_out, Q, K, V, the output, its
    # logsumexp and the mask; writes the gradients of Q, K and V (and of the bias where
    # _efficient_attention's grad_input_mask asks for it).
    grad_out, q, k, v = c.args[0], c.args[1], c.args[2], c.args[3]
    batch, rows, pairs, e, ev, mask = _geometry(c, q, k, v)
    per_score = SOFTMAX_BACKWARD_PER_SCORE + (1 if mask is not None else 0)
    ops = 2 * pairs * (3 * e + 2 * ev) + per_score * pairs + 2 * batch * rows * ev
    saved = [c.get("out"), c.get("logsumexp")]
    read = sum(_nbytes(t) for t in [grad_out, q, k, v, mask] + saved if _is_tensor(t))
    written = _nbytes(q) + _nbytes(k) + _nbytes(v)
    grad_mask = c.get("grad_input_mask")
    if mask is not None and grad_mask is not None and len(grad_mask) > 3 and grad_mask[3]:
        written += _nbytes(mask)
    return ops, read + written, written


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
    ops += _attention_ops(batch * rows * cols, d, d)
    ops += SOFTMAX_PER_SCORE * batch * heads * rows * cols
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
    ops += _attention_ops(tokens * rows, d, d) + SOFTMAX_PER_SCORE * batch * heads * rows * rows
    ops += 2 * tokens * d * d + tokens * d  # out-projection
    ops += 2 * tokens * d + 2 * 7 * tokens * d  # residual adds, layer norms
    ops += 2 * tokens * d * hidden + tokens * hidden + act * tokens * hidden  # ffn 1, activation
    ops += 2 * tokens * hidden * d + tokens * d  # ffn 2
    params = sum(_nbytes(t) for t in c.args[3:18] if _is_tensor(t))
    out = tokens * d * src.element_size()
    return ops, _nbytes(src) + params + out, out


TABLE = {name: (_sdpa, "attention") for name in SDPA_FORWARD}
TABLE.update({name: (_sdpa_backward, "attention backward") for name in SDPA_BACKWARD})
TABLE.update({"_native_multi_head_attention": (_mha, "attention"),
              "_transformer_encoder_layer_fwd": (_encoder_layer, "transformer layer")})
