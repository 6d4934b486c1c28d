"""The storage rule of ``Custom`` (MXNet's ``FInferStorageType`` for Python operators): with a
sparse input, the user's code gets the inputs in their own storage and fills outputs of the
storage types its prop's ``infer_storage_type`` gives, as MXNet runs custom operators.

Attached after :mod:`.storage`, as the other storage rules (see there for the protocol).
"""
import torch

from .. import _op_profile, autograd, upper_layers
from ..base import MXNetError, TYPE_FLAG_OF_TORCH
from ..context import context_of_device
from . import storage
from .custom import (_infer_shapes, _operator_for, _output_types, _prop_for, _prop_of, _run_user_code,
                     custom)


def _storage_types(prop, arg_stypes):
    """``(argument, output, auxiliary)`` storage types from the prop's ``infer_storage_type``;
    what it raises (the default's refusal of sparse arguments) as MXNetError, as in MXNet."""
    try:
        return prop.infer_storage_type(list(arg_stypes))
    except MXNetError:
        raise
    except Exception as err:    # pylint: disable=broad-except
        raise MXNetError('custom operator %s.infer_storage_type failed: %s: %s'
                         % (type(prop).__name__, type(err).__name__, err)) from err


def _storage_rule(stypes, attrs):
    """The storage rule of ``Custom`` (asked only when an input is sparse): the prop's
    ``infer_storage_type`` says what its outputs are, and the user's code then gets the
    arguments in their own storage, as MXNet runs custom operators."""
    prop = _prop_for(attrs)
    n_args = len(prop.list_arguments())
    outputs = _storage_types(prop, [s or storage.DEFAULT for s in stypes[:n_args]])[1]
    return outputs[0] if outputs else storage.DEFAULT


def _array_parts_tensor(array, stype):
    """The torch tensor (sparse for a sparse ``stype``) of an output array the user filled."""
    if stype == storage.CSR:
        return storage.make_csr(array.indptr._t, array.indices._t, array.data._t, array.shape)
    if stype == storage.ROW_SPARSE:
        return storage.make_rsp(array.indices._t, array.data._t, array.shape)
    return array._t


def custom_sparse(*tensors, op_type, **kwargs):
    """``Custom`` with a sparse input: the user's ``forward`` gets the inputs in their storage
    and outputs of the storage types its prop's ``infer_storage_type`` gives (not recorded for
    backward: a recorded call with a variable runs the dense implementation)."""
    prop = _prop_of(op_type, tuple(kwargs.items()))
    n_args = len(prop.list_arguments())
    args, aux = tensors[:n_args], tensors[n_args:]
    out_stypes = _storage_types(prop, [storage.stype_of(t) for t in args])[1]
    _, out_shapes, _ = _infer_shapes(prop, [t.shape for t in args])
    out_dtypes = _output_types(prop, args)
    device = tensors[0].device
    ctx = context_of_device(device)
    op = _operator_for(prop, ctx, tuple(tuple(t.shape) for t in tensors),
                       tuple(TYPE_FLAG_OF_TORCH[t.dtype] for t in tensors))
    wrap = upper_layers.get('sparse_array_from_tensor')
    outputs = [wrap(storage.cast(torch.zeros(shape, dtype=dtype, device=device), stype), ctx)
               for shape, dtype, stype in zip(out_shapes, out_dtypes, out_stypes)]
    with _op_profile.custom_scope(op_type):
        _run_user_code(op.forward, 'forward', is_train=int(autograd.is_training()),
                       req=['write'] * len(outputs), in_data=[wrap(t, ctx) for t in args],
                       out_data=outputs, aux=[wrap(t, ctx) for t in aux])
    results = [_array_parts_tensor(o, stype) for o, stype in zip(outputs, out_stypes)]
    return results[0] if len(results) == 1 else results


custom.spec.storage = (_storage_rule, custom_sparse)
