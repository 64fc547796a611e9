"""Ops that pick or place elements by an index: gather, embedding, x[idx], x[idx] = v
(index_put_, a KV cache's write), scatter and its reductions, EmbeddingBag.

Bytes count the index and the elements picked or placed, not the whole tensor indexed (a
KV cache of a thousand positions updated at one costs that one); a copy of the whole tensor
is counted where the op makes one (out-of-place scatter and index_put). A boolean mask picks
as many elements as it has true values, which the shapes do not give: no formula.
"""
import math

import torch

from .formulas_common import _is_tensor, _nbytes


def _indexed_elements(x, indices):
    """How many elements x[indices] addresses (advanced indexing: integer index tensors
    broadcast together, None for a dimension taken whole, trailing dimensions whole), or
    None for a boolean mask."""
    indices = list(indices)
    tensors = [i for i in indices if i is not None]
    if not tensors or len(indices) > x.dim():
        return None
    if any(i.dtype in (torch.bool, torch.uint8) for i in tensors):
        return None
    picked = math.prod(torch.broadcast_shapes(*[i.shape for i in tensors]))
    whole = [x.shape[d] for d, i in enumerate(indices) if i is None] + list(x.shape[len(indices):])
    return picked * math.prod(whole), sum(_nbytes(i) for i in tensors)


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
    # x[idx] with integer index tensors (rows picked by index, as gather's, or positions on
    # several dimensions): the indices read, each picked element read and written.
    x = c.args[0]
    found = _indexed_elements(x, c.args[1])
    if found is None:
        return None
    n, index_bytes = found
    out = n * x.element_size()
    return 0, index_bytes + 2 * out, out


def _index_put(c):
    # index_put_(self, indices, values, accumulate): values (broadcast to the addressed
    # elements) stored at the indices, or added there (1 an element, the old values read).
    # In place it writes only those elements; index_put (out of place) copies self first.
    # Returns the working set: in place, an accumulated element is read and written.
    x, values = c.args[0], c.args[2]
    found = _indexed_elements(x, c.args[1])
    if found is None:
        return None
    n, index_bytes = found
    accumulate = bool(c.get("accumulate", False))
    placed = n * x.element_size()
    read = index_bytes + _nbytes(values) + (placed if accumulate else 0)
    if not c.inplace:
        return (n if accumulate else 0), read + 2 * _nbytes(x), _nbytes(x), None
    return (n if accumulate else 0), read + placed, placed, read + placed - (placed if accumulate else 0)


def _scatter(c):
    # scatter(self, dim, index, src | value[, reduce]), scatter_add, scatter_reduce: one
    # element of src (or the value) placed per index element, reduced into the old one (1)
    # for scatter_add, scatter_reduce and scatter with reduce=; mean divides each output
    # once more. Out of place the op copies self first (read and written whole); in place
    # it writes the placed elements, reading them too where it reduces.
    x, index = c.args[0], c.args[2]
    src = c.args[3] if len(c.args) > 3 and _is_tensor(c.args[3]) else c.kwargs.get("src")
    reduce = c.get("reduce")
    reduces = c.base != "scatter" or reduce is not None
    n, item = index.numel(), x.element_size()
    ops = n if reduces else 0
    ops += x.numel() if reduce == "mean" else 0
    read = _nbytes(index) + (n * src.element_size() if _is_tensor(src) else 0)
    if not c.inplace:
        return ops, read + 2 * _nbytes(x), _nbytes(x), None
    read += n * item if reduces else 0
    return ops, read + n * item, n * item, read + n * item - (n * item if reduces else 0)


def _embedding_bag(c):
    # The picked rows summed (or averaged, or maxed) into one row per bag: a row read and one
    # operation per element for each index, the bags written (its bookkeeping outputs, an
    # int64 per index or bag, too).
    weight, indices, offsets = c.args[0], c.args[1], c.args[2]
    last = bool(c.get("include_last_offset", False))
    bags = offsets.numel() - (1 if last else 0)
    dim = weight.shape[-1]
    out = bags * dim * weight.element_size()
    book = 8 * (indices.numel() + 2 * bags)
    read = _nbytes(indices) + _nbytes(offsets) + indices.numel() * dim * weight.element_size()
    return indices.numel() * dim, read + out + book, out + book


TABLE = {
    "embedding": (_gather, "gather"), "index_select": (_gather, "gather"),
    "gather": (_gather, "gather"), "index": (_index, "gather"),
    "index_put": (_index_put, "scatter"), "_index_put_impl": (_index_put, "scatter"),
    "scatter": (_scatter, "scatter"), "scatter_add": (_scatter, "scatter"),
    "scatter_reduce": (_scatter, "scatter"), "_embedding_bag": (_embedding_bag, "gather"),
}
