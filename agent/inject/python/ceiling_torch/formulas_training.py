"""Training: the gradients' ops (norms, softmax, pooling, interpolation, padding, embedding,
the negative log-likelihood loss) and the optimizers' multi-tensor paths (_foreach_* lists,
_fused_adam(w)_, _fused_sgd_).

An optimizer step on torch 2.x runs one op per parameter tensor (the single-tensor path, the
CPU default), one op per update over lists of tensors (foreach=True, CUDA's default), or one
fused op for the whole update (fused=True): the three count the same arithmetic per
parameter element (Adam's below), so a step's work does not depend on the path taken.
"""
import math

from .formulas_common import (OPS_PER_ELEMENT, UPSAMPLE_TAPS, _alpha_ops, _as_list, _is_tensor,
                              _item_size, _nbytes, _spatial_dims)


def _norm_backward(c):
    # grad_input from grad_out and the saved statistics: two reductions over the batch
    # (sum of grad_out, of grad_out * x_hat: 3 per element) and the elementwise update (5);
    # in inference only the per-channel scale (1). Reads grad_out and input, writes grad_input.
    grad_out, x = c.args[0], c.args[1]
    training = bool(c.args[7]) if c.base == "native_batch_norm_backward" else True
    return x.numel() * (8 if training else 1), _nbytes(grad_out) + 2 * _nbytes(x), _nbytes(x)


def _softmax_backward(c):
    # softmax: y * (dy - sum(dy * y)); log_softmax: dy - exp(y) * sum(dy): 3 per element and
    # a sum (1). Reads grad_output and the forward's output, writes grad_input.
    grad_out = c.args[0]
    return 4 * grad_out.numel(), 3 * _nbytes(grad_out), _nbytes(grad_out)


def _pool_backward(c):
    # Each grad_output element added to the input position its index names (max pooling,
    # adaptive max pooling: the indices are the last argument). Reads grad_output and the
    # indices, writes grad_input (the input itself is not read).
    grad_out, x = c.args[0], c.args[1]
    indices = c.args[-1] if _is_tensor(c.args[-1]) and c.args[-1] is not x else None
    read = _nbytes(grad_out) + (_nbytes(indices) if indices is not None else 0)
    return grad_out.numel(), read + _nbytes(x), _nbytes(x)


def _avg_pool_backward(c):
    # avg_pool{2,3}d_backward(grad_output, self, kernel_size, ...): each grad_output element
    # divided by its window's count (1), then added to every input position of its window.
    grad_out, x = c.args[0], c.args[1]
    window = math.prod(_as_list(c.args[2], _spatial_dims(c.base)))
    return grad_out.numel() * (1 + window), _nbytes(grad_out) + _nbytes(x), _nbytes(x)


def _adaptive_avg_pool_backward(c):
    # As the forward: each input position receives about one window's share (1 add), each
    # grad_output element is divided by its window's size (1).
    grad_out, x = c.args[0], c.args[1]
    return x.numel() + grad_out.numel(), _nbytes(grad_out) + _nbytes(x), _nbytes(x)


def _upsample_backward(c):
    # upsample_*_backward(grad_output, output_size, input_size, ...): each grad_output element
    # spread over the forward's taps (a multiply-add each, as the forward counts them);
    # nearest adds it to its one source (1). Reads grad_output, writes grad_input.
    grad_out = c.args[0]
    input_size = c.args[2] if len(c.args) > 2 else c.kwargs["input_size"]
    taps = UPSAMPLE_TAPS[c.base[: -len("_backward")]]
    written = math.prod(input_size) * grad_out.element_size()
    ops = grad_out.numel() * (2 * taps if taps else 1)
    return ops, _nbytes(grad_out) + written, written


def _pad_backward(c):
    # reflection/replication_pad*_backward(grad_output, self, padding): the padded border's
    # gradients folded back onto the positions they copied (an add each). Reads grad_output,
    # writes grad_input.
    grad_out, x = c.args[0], c.args[1]
    return grad_out.numel() - x.numel(), _nbytes(grad_out) + _nbytes(x), _nbytes(x)


def _embedding_backward(c):
    # embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
    # scale_grad_by_freq): the [num_weights, D] gradient zeroed, then each index's grad row
    # added to its row (1 an element; dividing by the index's count where scaled: 1 more).
    grad_out, indices, rows = c.args[0], c.args[1], int(c.args[2])
    dim = grad_out.shape[-1]
    adds = indices.numel() * dim
    ops = adds * (2 if c.get("scale_grad_by_freq", False) else 1)
    written = rows * dim * grad_out.element_size()
    return ops, _nbytes(grad_out) + _nbytes(indices) + written, written


def _nll_loss(c):
    # nll_loss(2d)_forward(self, target, weight, reduction, ignore_index): per target (a row
    # of [N, C], a pixel of [N, C, H, W]) its class's log-probability picked and negated (1),
    # weighted (1 with a weight), summed (1 unless reduction is none). Reads the targets and
    # only the picked elements (and weights); writes the loss(es) and the total weight.
    # Targets equal to ignore_index are skipped at run time: counted as if none were.
    x, target = c.args[0], c.args[1]
    weight = c.get("weight")
    reduced = c.get("reduction", 1) != 0
    n, item = target.numel(), x.element_size()
    weighted = _is_tensor(weight)
    ops = n * (1 + int(weighted) + int(reduced))
    read = _nbytes(target) + n * item + (n * weight.element_size() if weighted else 0)
    written = (1 if reduced else n) * item + item
    return ops, read + written, written


def _nll_loss_backward(c):
    # nll_loss(2d)_backward(grad_output, self, target, weight, reduction, ignore_index,
    # total_weight): grad_input is zero but at each target's class, where it is the gradient
    # negated (1), weighted (1 with a weight), divided by the total weight for a mean (1).
    # Reads grad_output, the targets, the picked weights; writes the whole grad_input.
    grad_out, x, target = c.args[0], c.args[1], c.args[2]
    weight = c.get("weight")
    n = target.numel()
    weighted = _is_tensor(weight)
    ops = n * (1 + int(weighted) + int(c.get("reduction", 1) == 1))
    read = _nbytes(grad_out) + _nbytes(target) + (n * weight.element_size() if weighted else 0)
    read += _nbytes(c.get("total_weight")) if _is_tensor(c.get("total_weight")) else 0
    return ops, read + _nbytes(x), _nbytes(x)


# _foreach_<op> over lists of tensors: each list entry as the single-tensor op, summed.
FOREACH_REDUCTIONS = {"norm": 2}  # square-accumulate per element, one value per tensor
FOREACH_MOVES = {"copy": 0, "zero": 0}  # copy_(self, src): src read; zero_: self written


def _foreach(c):
    # Lists of tensors (self first, then its partners) and lone tensors (a Tensor overload's
    # other, a ScalarList held in a tensor) read once; each self entry written, in place or
    # as a new tensor of its size (norm: one value per tensor). Returns the working set too:
    # an in-place list is read and written, the same bytes.
    op = c.base[len("_foreach_"):]
    lists = [a for a in c.args if isinstance(a, (list, tuple)) and a and _is_tensor(a[0])]
    lone = [a for a in list(c.args) + [v for k, v in c.kwargs.items() if k != "out"]
            if _is_tensor(a)]
    selfs = lists[0]
    n = sum(t.numel() for t in selfs)
    self_bytes = sum(_nbytes(t) for t in selfs)
    partners = sum(_nbytes(t) for entries in lists[1:] for t in entries) + sum(_nbytes(t) for t in lone)
    if op in FOREACH_MOVES:
        written = self_bytes
        return 0, partners + written, written, partners + written
    if op in FOREACH_REDUCTIONS:
        dtype = c.get("dtype")
        written = len(selfs) * (_item_size(dtype) if dtype is not None else selfs[0].element_size())
        return FOREACH_REDUCTIONS[op] * n, self_bytes + partners + written, written, None
    ops = (OPS_PER_ELEMENT[op] + _alpha_ops(c)) * n
    read = self_bytes + partners
    return ops, read + self_bytes, self_bytes, read if c.inplace else None


# Adam per parameter element, as torch's single-tensor and foreach paths run it: the first
# moment lerp (3), the second moment's scale and addcmul (1 + 3), the denominator's sqrt,
# bias correction and eps (3), the update's addcdiv (3); decay: AdamW scales the parameter
# (1), Adam adds wd * param to the gradient (2); amsgrad's running max (1); maximize
# negates the gradient (1); a grad_scale (AMP) divides it (1).
ADAM_OPS = 3 + 4 + 3 + 3


def _fused_adam(c):
    # _fused_adam(w)_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
    # *, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf):
    # in place; reads every list, writes the parameters and the moments (the step counts
    # were incremented before, by _foreach_add_).
    params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps = c.args[:6]
    amsgrad = bool(c.get("amsgrad", False))
    per = ADAM_OPS + int(bool(c.get("maximize", False))) + int(amsgrad)
    if c.get("weight_decay", 0):
        per += 1 if c.base == "_fused_adamw" else 2
    per += 1 if _is_tensor(c.get("grad_scale")) else 0
    updated = [params, exp_avgs, exp_avg_sqs] + ([max_sqs] if amsgrad else [])
    written = sum(_nbytes(t) for entries in updated for t in entries)
    read = written + sum(_nbytes(t) for t in list(grads) + list(steps))
    return per * sum(t.numel() for t in params), read + written, written, read


def _fused_sgd(c):
    # _fused_sgd_(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr,
    # dampening, nesterov, maximize, is_first_step, grad_scale, found_inf), per element as
    # the single-tensor path: decay g + wd * p (2); momentum b * m + (1 - dampening) * g
    # (2, 3 with dampening; the first step copies g: 0); nesterov g + m * b (2); the update
    # p - lr * g (2); maximize (1); a grad_scale (1).
    params, grads, bufs = c.args[0], c.args[1], c.args[2]
    momentum = c.get("momentum", 0)
    first = bool(c.get("is_first_step", False))
    per = 2 + (2 if c.get("weight_decay", 0) else 0) + int(bool(c.get("maximize", False)))
    per += 1 if _is_tensor(c.get("grad_scale")) else 0
    if momentum:
        per += 0 if first else 2 + (1 if c.get("dampening", 0) else 0)
        per += 2 if c.get("nesterov", False) else 0
    updated = list(params) + (list(bufs) if momentum else [])
    written = sum(_nbytes(t) for t in updated)
    read = sum(_nbytes(t) for t in list(params) + list(grads))
    read += sum(_nbytes(t) for t in bufs) if momentum and not first else 0
    return per * sum(t.numel() for t in params), read + written, written, read


TABLE = {
    "native_batch_norm_backward": (_norm_backward, "norm backward"),
    "native_layer_norm_backward": (_norm_backward, "norm backward"),
    "native_group_norm_backward": (_norm_backward, "norm backward"),
    "_softmax_backward_data": (_softmax_backward, "softmax backward"),
    "_log_softmax_backward_data": (_softmax_backward, "softmax backward"),
    "nll_loss_forward": (_nll_loss, "loss"), "nll_loss2d_forward": (_nll_loss, "loss"),
    "nll_loss_backward": (_nll_loss_backward, "loss backward"),
    "nll_loss2d_backward": (_nll_loss_backward, "loss backward"),
    "embedding_dense_backward": (_embedding_backward, "gather backward"),
    "_fused_adam": (_fused_adam, "optimizer"), "_fused_adamw": (_fused_adam, "optimizer"),
    "_fused_sgd": (_fused_sgd, "optimizer"),
}
for _name in ("max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward",
              "adaptive_max_pool2d_backward", "adaptive_max_pool3d_backward"):
    TABLE[_name] = (_pool_backward, "pooling backward")
for _name in ("avg_pool2d_backward", "avg_pool3d_backward"):
    TABLE[_name] = (_avg_pool_backward, "pooling backward")
for _name in ("_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward"):
    TABLE[_name] = (_adaptive_avg_pool_backward, "pooling backward")
for _name in UPSAMPLE_TAPS:
    TABLE[f"{_name}_backward"] = (_upsample_backward, "interpolation backward")
for _kind in ("reflection", "replication"):
    for _d in (1, 2, 3):
        TABLE[f"{_kind}_pad{_d}d_backward"] = (_pad_backward, "copy")
# A list op is classed as its single-tensor op (an optimizer's step shows as elementwise
# work, gradient clipping's _foreach_norm as a reduction).
for _name in OPS_PER_ELEMENT:
    TABLE[f"_foreach_{_name}"] = (_foreach, "elementwise")
TABLE.update({"_foreach_norm": (_foreach, "reduction"), "_foreach_copy": (_foreach, "copy"),
              "_foreach_zero": (_foreach, "fill")})
