"""Sparse storage inside compiled graphs (executors): the storage-type rules of
:mod:`neomx.operator.storage` applied to each operator call, as MXNet's executors do.

An executor bound with sparse arguments (``var(stype='csr')``, ``simple_bind(stype_dict=)``)
hands the graph their torch sparse tensors rather than dense copies (a CSR batch of a
million features stays the size of its non-zeros). Each call of a graph compiled with
:func:`keep_sparse_storage` then runs:

* all-dense inputs: the operator's implementation, as in any graph (one layout check);
* a sparse input and a storage rule keeping it sparse: the rule's sparse implementation;
  recorded for backward only where torch differentiates it (``spec.storage_recorded``:
  ``dot(csr, weight)``, whose weight gradient is the rows the batch uses, row_sparse);
* otherwise MXNet's fallback: the sparse inputs densified, the dense implementation, with
  MXNet's storage-fallback log (once per operator and storage types).

Whatever ran, an executor's outputs have the storage types MXNet's storage inference gives
them at bind (:func:`output_stypes`): a sparse argument that is differentiated enters the
graph dense (torch differentiates few sparse kernels), yet ``relu`` of a row_sparse argument
is still a row_sparse output, as in MXNet.
"""
import functools

import torch

from ..base import MXNetError
from ..ndarray.sparse_arrays import storage_fallback_log
from ..operator import storage
from .plan import Call, Plan

__all__ = ['keep_sparse_storage', 'check_bound_storage', 'output_stypes']


def keep_sparse_storage(plan):
    """``plan`` with every call dispatched on its inputs' storage types (see the module doc)."""
    calls = []
    for call in plan.calls:
        fn = call.fn
        if isinstance(fn, functools.partial) and not fn.args:
            fn = functools.partial(_dispatch, call.node.spec, fn.func, fn.keywords)
        calls.append(Call(fn, call.args, call.out, call.node))
    return Plan(plan.inputs, calls, plan.heads)


def _dispatch(spec, impl, attrs, *tensors):
    for t in tensors:
        if t is not None and t.layout is not torch.strided:
            break
    else:
        return impl(*tensors, **attrs)
    rules = getattr(spec, 'storage', None)
    if rules is not None:
        rule, sparse_impl = rules
        stypes = tuple(None if t is None else storage.stype_of(t) for t in tensors)
        if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
            recorded = getattr(spec, 'storage_recorded', None)
            if recorded is not None and recorded(stypes, attrs):
                return sparse_impl(*tensors, **attrs)
        elif rule(stypes, attrs) is not None:
            return sparse_impl(*tensors, **attrs)
    storage_fallback_log(spec.name, [storage.stype_of(t) for t in tensors if t is not None], None)
    return impl(*[t if t is None or t.layout is torch.strided else storage.to_dense(t) for t in tensors], **attrs)


def check_bound_storage(symbol, arg_stypes):
    """Raise, at bind, what MXNet's storage inference refuses for the storage types of the
    arguments (``arg_stypes``: name -> stype): the ``storage_check`` of each operator that
    reads a sparse argument directly (BatchNorm with ``fix_gamma`` on sparse inputs)."""
    for node in symbol._nodes():
        check = None if node.is_variable else getattr(node.spec, 'storage_check', None)
        if check is None:
            continue
        stypes = tuple(arg_stypes.get(e[0].name, 'default') if e[0].is_variable else 'default'
                       for e in node.inputs)
        if any(s != 'default' for s in stypes):
            check(stypes, node.params)


def output_stypes(symbol, arg_stypes):
    """The storage type of each output of ``symbol`` for arguments of the storage types
    ``arg_stypes`` (name -> stype; absent names are dense): each operator's storage rule
    (:func:`neomx.operator.storage.infer_storage`) applied in graph order, as MXNet infers
    storage types at bind. An operator with several outputs gives dense ones."""
    found = {}
    for node in symbol._nodes():
        if node.is_variable:
            found[(node, 0)] = arg_stypes.get(node.name, storage.DEFAULT)
            continue
        stype = storage.DEFAULT
        if node.num_outputs() == 1:
            try:
                stype = storage.infer_storage(node.spec, [found.get(e, storage.DEFAULT) for e in node.inputs],
                                              node.params)
            except MXNetError:      # refused: reported by the call itself when it runs
                stype = storage.DEFAULT
        found[(node, 0)] = stype
    return [found.get(tuple(head), storage.DEFAULT) for head in symbol._heads]
