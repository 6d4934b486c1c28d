"""Data-parallel execution with one thread per context, as GluonCV's ``utils.parallel``.

neomx computes eagerly: ``[net(x) for x in parts]`` finishes the forward pass of one
context before the next begins, so a layer cannot combine values of several contexts
within one step. :func:`parallel_apply` with ``sync=True`` runs each context's call in its
own thread instead, inside a *parallel step*: code that needs the other contexts (the
``_contrib_SyncBatchNorm`` operator behind :class:`~neomx.gluon.contrib.nn.SyncBatchNorm`)
calls :func:`current_step` and :meth:`DeviceStep.allgather`, which waits for the same call
on every other context. That machinery lives in ``neomx._parallel_step``, below the
operators; this module starts the steps.

The worker threads inherit the caller's autograd state (recording, training, torch's grad
mode), default context, name manager and attribute/name scopes. Torch builds one autograd
graph across threads, so ``autograd.backward`` over the returned losses works from the
calling thread, gradients flowing between contexts where the layers exchanged values.

Example::

    model = DataParallelModel(net, ctx_list, sync=True)
    criterion = DataParallelCriterion(loss_fn, ctx_list, sync=True)
    with autograd.record():
        losses = criterion(model(data), label)
    autograd.backward(losses)
    trainer.step(batch_size)
"""
import threading

import torch

from ... import autograd
from ..._parallel_step import (DeviceStep, PeerFailure, StepGroup, SyncTimeoutError,
                               current_step, device_step)
from ...base import MXNetError
from ...context import Context
from ...name import NameManager
from ...ndarray import NDArray
from ...symbol.attribute import AttrScope
from ..block import Block, _BlockScope
from ..utils import split_and_load

__all__ = ['parallel_apply', 'DataParallelModel', 'DataParallelCriterion', 'current_step',
           'DeviceStep', 'SyncTimeoutError']

#: Seconds a context waits at an exchange for the other contexts before giving up
#: (read when a step starts).
SYNC_TIMEOUT = 120.0


# ------------------------------------------------------------ thread state
# Thread-local scopes a worker must see as its caller does (each keeps its state in ``.value``).
_INHERITED_SCOPES = (Context._default, NameManager._current, AttrScope._current,
                     _BlockScope._current)


class _CallerState:
    """The calling thread's autograd flags and scopes, to be installed in a worker thread."""

    def __init__(self):
        self.recording = autograd.is_recording()
        self.training = autograd.is_training()
        self.grad_enabled = torch.is_grad_enabled()
        self.scopes = [getattr(scope, 'value', None) for scope in _INHERITED_SCOPES]

    def install(self):
        autograd.set_recording(self.recording)
        autograd.set_training(self.training)
        torch.set_grad_enabled(self.grad_enabled)   # after set_recording, which also sets it
        for scope, value in zip(_INHERITED_SCOPES, self.scopes):
            scope.value = value


# ------------------------------------------------------------------ running
def _run_in_threads(module, args_list, kwargs_list):
    """``module(*args, **kwargs)`` for each context in its own thread, in one parallel step.

    Returns the results in input order, or raises the first error in input order,
    preferring an error of its own over one caused by another context's failure.
    """
    group = StepGroup(len(args_list), SYNC_TIMEOUT)
    caller = _CallerState()
    results = [None] * len(args_list)
    errors = [None] * len(args_list)

    def work(rank):
        caller.install()
        try:
            with device_step(group, rank):
                results[rank] = module(*args_list[rank], **kwargs_list[rank])
        except BaseException as err:        # pylint: disable=broad-except
            errors[rank] = err              # re-raised by the calling thread

    threads = [threading.Thread(target=work, args=(rank,), name='neomx-parallel-%d' % rank,
                                daemon=True) for rank in range(len(args_list))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failures = [err for err in errors if err is not None]
    if failures:
        raise next((err for err in failures if not isinstance(err, PeerFailure)), failures[0])
    return results


def _has_untraced_graph(block):
    """Whether calling ``block`` traces a graph: it or a descendant reached through blocks
    that are not hybridized is hybridized and has no graph yet."""
    if getattr(block, '_active', False):
        return block._cached_graph is None
    return any(_has_untraced_graph(child) for child in block._children.values())


def _first_call_prepares(module):
    """Whether calling ``module`` completes deferred parameter shapes or traces graphs."""
    if not isinstance(module, Block):           # a plain function
        return False
    return (any(p._deferred_init for p in module.collect_params().values())
            or _has_untraced_graph(module))


def _apply(module, args_list, kwargs_list, sync):
    """The raw results of ``module`` on each context's arguments."""
    if not sync or len(args_list) == 1:
        return [module(*args, **kwargs) for args, kwargs in zip(args_list, kwargs_list)]
    if _first_call_prepares(module):
        # Prepare in this thread first: concurrent first calls would race to initialize the
        # same parameters and to trace the same graphs (a block's name scope is not
        # thread-safe). Predict mode without recording has no side effects.
        with autograd.pause(train_mode=False):
            module(*args_list[0], **kwargs_list[0])
    return _run_in_threads(module, args_list, kwargs_list)


def _as_tuple(output):
    """A per-context output as a tuple, as GluonCV returns it."""
    if isinstance(output, NDArray):
        return (output,)
    if isinstance(output, list) and output:
        return tuple(output)
    return output


def _per_context_kwargs(kwargs_tup, count):
    if kwargs_tup is None:
        return ({},) * count
    if len(kwargs_tup) != count:
        raise MXNetError('parallel_apply: %d keyword dicts for %d inputs'
                         % (len(kwargs_tup), count))
    return kwargs_tup


def parallel_apply(module, inputs, kwargs_tup=None, sync=False):
    """Apply ``module`` to the inputs of each context.

    Parameters
    ----------
    module : Block or callable
    inputs : sequence of tuple
        ``inputs[i]`` holds the positional arguments for context ``i``.
    kwargs_tup : sequence of dict, optional
        Keyword arguments for each context.
    sync : bool
        Run the contexts in parallel threads, in one parallel step, so that layers such
        as SyncBatchNorm can exchange values between them. Otherwise they run one after the
        other in the calling thread.

    Returns
    -------
    list of tuple
        Each context's output as a tuple of NDArrays.
    """
    kwargs_tup = _per_context_kwargs(kwargs_tup, len(inputs))
    return [_as_tuple(out) for out in _apply(module, inputs, kwargs_tup, sync)]


def _split_load(obj, ctx_list, batch_axis=0):
    """``obj`` split across ``ctx_list``: one value per context (NDArrays split along the
    batch axis; tuples, lists and dicts split element-wise; anything else repeated)."""
    if isinstance(obj, NDArray):
        return split_and_load(obj, ctx_list, batch_axis, even_split=False)
    if isinstance(obj, tuple) and obj:
        return list(zip(*[_split_load(item, ctx_list, batch_axis) for item in obj]))
    if isinstance(obj, list) and obj:
        return [list(parts) for parts in zip(*[_split_load(item, ctx_list, batch_axis)
                                               for item in obj])]
    if isinstance(obj, dict) and obj:
        keys = list(obj)
        per_key = [_split_load(obj[key], ctx_list, batch_axis) for key in keys]
        return [type(obj)(zip(keys, values)) for values in zip(*per_key)]
    return [obj] * len(ctx_list)


def _split_arguments(args, kwargs, ctx_list):
    """Per-context positional tuples and keyword dicts from whole-batch arguments."""
    args_list = _split_load(tuple(args), ctx_list) if args else [()] * len(ctx_list)
    kwargs_list = _split_load(kwargs, ctx_list) if kwargs else [{}] * len(ctx_list)
    return args_list, kwargs_list


class DataParallelModel:
    """Run ``module`` data-parallel: each call splits the batch across ``ctx_list``.

    Parameters
    ----------
    module : Block
        Its parameters are moved to ``ctx_list``.
    ctx_list : list of Context, optional
        Without it calls go to ``module`` unchanged.
    sync : bool
        Run the contexts in parallel threads within one parallel step (needed by
        SyncBatchNorm to share statistics); otherwise one after the other.

    Calling it with whole-batch NDArrays returns one tuple of outputs per context.

    Example
    -------
    >>> net = mx.gluon.nn.Dense(1, in_units=2)
    >>> net.initialize(mx.init.One())
    >>> model = mx.gluon.contrib.parallel.DataParallelModel(net, [mx.cpu(0), mx.cpu(1)])
    >>> outputs = model(mx.nd.array([[1, 2], [3, 4], [5, 6], [7, 8]]))   # two samples per context
    >>> [(out[0].context, out[0].asnumpy().ravel().tolist()) for out in outputs]
    [(cpu(0), [3.0, 7.0]), (cpu(1), [11.0, 15.0])]
    """

    def __init__(self, module, ctx_list=None, sync=False):
        if ctx_list:
            module.collect_params().reset_ctx(ctx=ctx_list)
        self.module = module
        self.ctx_list = ctx_list
        self.sync = sync

    def __call__(self, *inputs, **kwargs):
        if not self.ctx_list:
            return self.module(*inputs, **kwargs)
        args_list, kwargs_list = _split_arguments(inputs, kwargs, self.ctx_list)
        return parallel_apply(self.module, args_list, kwargs_list, self.sync)

    def __repr__(self):
        return 'DataParallel:\n module = {%s}' % self.module


class DataParallelCriterion:
    """Apply a loss to the per-context outputs of a :class:`DataParallelModel`.

    Parameters
    ----------
    module : Block
        The loss; called as ``module(*outputs_i, *targets_i)`` on each context.
    ctx_list : list of Context, optional
        Without it calls go to ``module`` unchanged.
    sync : bool
        Run the contexts in parallel threads; otherwise one after the other.

    Calling it with the model's outputs and whole-batch targets returns one loss per context.

    Example
    -------
    >>> ctx = [mx.cpu(0), mx.cpu(1)]
    >>> net = mx.gluon.nn.Dense(1, in_units=2)
    >>> net.initialize(mx.init.One())
    >>> model = mx.gluon.contrib.parallel.DataParallelModel(net, ctx)
    >>> criterion = mx.gluon.contrib.parallel.DataParallelCriterion(mx.gluon.loss.L2Loss(), ctx)
    >>> outputs = model(mx.nd.array([[1, 2], [3, 4], [5, 6], [7, 8]]))
    >>> losses = criterion(outputs, mx.nd.array([3, 7, 11, 16]))     # one loss per context
    >>> [loss.asnumpy().tolist() for loss in losses]
    [[0.0, 0.0], [0.0, 0.5]]
    """

    def __init__(self, module, ctx_list=None, sync=False):
        self.module = module
        self.ctx_list = ctx_list
        self.sync = sync

    def __call__(self, inputs, *targets, **kwargs):
        if not self.ctx_list:
            return self.module(inputs, *targets, **kwargs)
        if len(inputs) != len(self.ctx_list):
            raise MXNetError('DataParallelCriterion: %d outputs for %d contexts'
                             % (len(inputs), len(self.ctx_list)))
        target_list, kwargs_list = _split_arguments(targets, kwargs, self.ctx_list)
        args_list = [tuple(_as_tuple(out)) + tuple(target)
                     for out, target in zip(inputs, target_list)]
        return _apply(self.module, args_list, kwargs_list, self.sync)

    def __repr__(self):
        return 'DataParallelCriterion:\n module = {%s}' % self.module
