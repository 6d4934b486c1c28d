"""Operators that MXNet's Python frontend puts into graphs: ``_CustomFunction``, ``_NoGradient``,
``_Native`` and ``_NDArray``.

* ``_CustomFunction`` is the node an :class:`neomx.autograd.Function` call records
  (:func:`neomx.autograd.get_symbol` shows it). Its computation is the Python object that
  recorded it, not an operator attribute, so a graph holding it cannot run, as in MXNet.
* ``_NoGradient`` stands for "no gradient flows here" in gradient graphs; it has no value
  (MXNet's has no type inference either and refuses to run).
* ``_Native`` and ``_NDArray`` run the legacy Python operators (``mx.operator.NumpyOp``,
  ``NDArrayOp``): where MXNet's ``info`` attribute points at the operator's C callbacks,
  neomx's names the custom operator that the Python operator's ``get_symbol`` registered
  (its ``info_``), and the node computes what that operator computes.
"""
from ..base import MXNetError
from . import registry
from .custom import _prop_of, custom
from .registry import BOOL, STR


def _not_runnable(name, why):
    def run(*tensors, **attrs):
        raise MXNetError('%s: %s' % (name, why))
    run.__name__ = name
    return run


registry.register('_CustomFunction', variadic=True, doc=(
    "The node autograd.Function records (see autograd.get_symbol). The Function object that "
    "recorded it computes it; a graph holding the node cannot run it."))(
    _not_runnable('_CustomFunction', 'the node of an autograd.Function call; only the Function object '
                  'that recorded it computes it (run the Function instead)'))

registry.register('_NoGradient', doc='Place holder for variable who cannot perform gradient')(
    _not_runnable('_NoGradient', 'a placeholder for a variable without gradient; it has no value to compute'))


class _PythonOpSpec(registry.OpSpec):
    """``_Native``/``_NDArray``: the inputs and outputs of the Python operator that ``info`` names."""

    def input_names(self, attrs, num_args=None):
        return tuple(_prop_of(attrs['info'], ()).list_arguments())


def _python_op_outputs(attrs):
    return len(_prop_of(attrs['info'], ()).list_outputs())


def _python_op_output_names(attrs):
    return tuple(_prop_of(attrs['info'], ()).list_outputs())


def _run_python_op(*data, info, need_top_grad=True):  # pylint: disable=unused-argument
    """Run the legacy Python operator registered as ``info`` (a ``NumpyOp``/``NDArrayOp``'s
    ``info_``) on ``data``; ``need_top_grad`` is the operator's own (it decides the
    backward's inputs)."""
    return custom(*data, op_type=info)


registry.register('_Native', variadic=True, spec_class=_PythonOpSpec,
                  attrs=[('info', STR), ('need_top_grad', BOOL, True)],
                  num_outputs=_python_op_outputs, output_names=_python_op_output_names, doc=(
                      'Stub for implementing an operator implemented in native frontend language: '
                      "runs the NumpyOp whose info_ is ``info``."))(_run_python_op)


def _run_ndarray_op(*data, info):
    """Run the ``NDArrayOp`` registered as ``info`` on ``data``."""
    return custom(*data, op_type=info)


registry.register('_NDArray', variadic=True, spec_class=_PythonOpSpec, attrs=[('info', STR)],
                  num_outputs=_python_op_outputs, output_names=_python_op_output_names, doc=(
                      'Stub for implementing an operator implemented in native frontend language with '
                      "ndarray: runs the NDArrayOp whose info_ is ``info``."))(_run_ndarray_op)
