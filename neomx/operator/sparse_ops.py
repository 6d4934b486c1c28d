"""Operators that exist for sparse arrays: ``cast_storage``, ``_sparse_retain``, ``_square_sum``,
``_contrib_getnnz``, ``_contrib_SparseEmbedding`` and the sparse optimizer updates.

These are their dense implementations (what a dense input computes, and MXNet's fallback);
the storage rules and sparse implementations are in :mod:`.storage`, with every other
operator's.
"""
import torch
import torch.nn.functional as F

from .dtype_rules import DTypeRule
from .optimizer_ops import adagrad_
from .reduce import _reduce_dims
from .registry import register, check, choice, BOOL, DTYPE, FLOAT, INT, OPT_INT, OPT_SHAPE

__all__ = ['cast_storage', 'sparse_retain', 'square_sum', 'getnnz', 'sparse_adagrad_update',
           'sparse_embedding']


@register('cast_storage', inputs=('data',), attrs=[('stype', choice('default', 'row_sparse', 'csr'))],
          same_shape=True)
def cast_storage(data, stype):
    """The input in storage type ``stype`` (``'default'``, ``'row_sparse'``, ``'csr'``); csr
    needs a 2-D input."""
    check(stype != 'csr' or data.dim() == 2, 'cast_storage',
          'csr storage needs a 2-D array, got shape %s', tuple(data.shape))
    return data.clone()


@register('_sparse_retain', inputs=('data', 'indices'), dtypes=DTypeRule(free=('indices',)))
def sparse_retain(data, indices):
    """The rows ``indices`` of a row_sparse ``data`` (other rows dropped)."""
    check(indices is not None, '_sparse_retain', 'the input indices is missing (inputs: data, indices)')
    keep = torch.zeros(data.shape[0], dtype=torch.bool, device=data.device)
    keep[indices.reshape(-1).long()] = True
    return data * keep.reshape((-1,) + (1,) * (data.dim() - 1)).to(data.dtype)


@register('_square_sum', inputs=('data',),
          attrs=[('axis', OPT_SHAPE, None), ('keepdims', BOOL, False), ('exclude', BOOL, False)])
def square_sum(data, axis, keepdims, exclude):
    """``sum(square(data), axis)``, for row_sparse data without squaring the absent rows."""
    out = (data * data).sum(dim=_reduce_dims('_square_sum', data.shape, axis, exclude), keepdim=keepdims)
    return out.reshape(1) if out.dim() == 0 else out


@register('_contrib_getnnz', inputs=('data',), attrs=[('axis', OPT_INT, None)])
def getnnz(data, axis):
    """Number of stored values of a csr matrix: in all (``axis=None``) or per row (``axis=1``)."""
    check(axis in (None, 1, -1), '_contrib_getnnz', 'getnnz with axis = %s is not supported yet', axis)
    if axis is None:
        return torch.count_nonzero(data).reshape(1).to(torch.int64)
    return torch.count_nonzero(data, dim=1).to(torch.int64)


_UPDATE_TAIL = [('rescale_grad', FLOAT, 1.0), ('clip_gradient', FLOAT, -1.0)]


@register('_sparse_adagrad_update', inputs=('weight', 'grad', 'history'), aux=('history',),
          attrs=[('lr', FLOAT), ('epsilon', FLOAT, 1e-7), ('wd', FLOAT, 0.0)] + _UPDATE_TAIL)
def sparse_adagrad_update(weight, grad, history, lr, epsilon, wd, rescale_grad, clip_gradient):
    """AdaGrad step (``history += g**2; w -= lr * g / sqrt(history + epsilon)``); a row_sparse
    gradient updates its rows only. Weight decay must be 0, as in MXNet."""
    check(wd == 0, '_sparse_adagrad_update', 'weight decay is not supported (wd = %s)', wd)
    w = weight.clone()
    adagrad_([w], [grad], [history], [lr], [0.0], epsilon, rescale_grad, clip_gradient)
    return w


@register('_contrib_SparseEmbedding', inputs=('data', 'weight'),
          attrs=[('input_dim', INT), ('output_dim', INT), ('dtype', DTYPE, torch.float32),
                 ('deterministic', BOOL, False)],
          infer_args=lambda shapes, attrs: {'weight': (attrs['input_dim'], attrs['output_dim'])},
          dtype_inputs=('weight',))
def sparse_embedding(data, weight, input_dim, output_dim, dtype, deterministic):
    """Embedding whose weight gradient is row_sparse (the rows looked up): rows of ``weight``
    (input_dim, output_dim) picked by ``data``, clipped to ``[0, input_dim - 1]``."""
    check(tuple(weight.shape) == (input_dim, output_dim), 'SparseEmbedding',
          'weight shape %s, expected (input_dim, output_dim) = %s', tuple(weight.shape), (input_dim, output_dim))
    return F.embedding(data.long().clamp(0, input_dim - 1), weight)
