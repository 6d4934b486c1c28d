"""Data parallelism for :class:`~neomx.module.Module`: one executor per context.

Each batch is cut along its batch axis into one slice per context (sized by the work
loads); each context's executor runs its slice with its own copy of the parameters.
Outputs are concatenated back on the first context; gradients stay per context and are
summed by the Module's update (through a KVStore).
"""
import itertools
import logging
from collections import OrderedDict

import numpy as np

from ..base import MXNetError, np_dtype
from ..context import cpu
from ..io import DataDesc
from .. import ndarray as nd
from ..symbol.executor import storage_types
from ..symbol.inference import infer, per_group
from ..symbol.placement import argument_contexts

__all__ = ['DataParallelExecutorGroup', 'split_batch']


def split_batch(batch_size, work_load_list):
    """Slices of ``range(batch_size)``, one per context, in proportion to the work loads.

    Rounding leftovers go to (or are taken from) the last slice.

    Raises
    ------
    ValueError
        When a slice would be empty (more contexts than samples).
    """
    total = sum(work_load_list)
    sizes = [round(load * batch_size / total) for load in work_load_list]
    ends = [min(end, batch_size) for end in itertools.accumulate(sizes[:-1])] + [batch_size]
    slices = [slice(begin, end) for begin, end in zip([0] + ends[:-1], ends)]
    if any(s.start >= s.stop for s in slices):
        raise ValueError('Too many slices: batch size %d cannot be split over work loads %s without '
                         'empty parts' % (batch_size, work_load_list))
    return slices


def _slice(array, axis, part):
    """The part of ``array`` along ``axis`` (the whole array when there is no batch axis)."""
    if axis < 0:
        return array
    return nd.slice_axis(array, axis=axis, begin=part.start, end=part.stop)


def _merge(arrays, axis):
    """One array from the per-context parts (concatenated on the first part's context)."""
    if axis < 0 or len(arrays) == 1:
        return arrays[0]
    home = arrays[0].context
    return nd.concat(*[a.as_in_context(home) for a in arrays], dim=axis)


def _reused(arrays, name, shape, dtype):
    """``arrays[name]`` when it exists with this shape and dtype, else None."""
    array = arrays.get(name)
    if array is not None and array.shape == tuple(shape) and array.dtype == dtype:
        return array
    return None


def _group2ctx_per_device(group2ctxs, num_device):
    """MXNet's ``group2ctxs`` (None, a list of one dict per device, or a dict of group -> one
    context per device) as one ``group2ctx`` dict (or None) per device."""
    if group2ctxs is None:
        return [None] * num_device
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != num_device:
            raise ValueError('group2ctxs has %d entries for %d contexts' % (len(group2ctxs), num_device))
        return group2ctxs
    per_device = [{} for _ in range(num_device)]
    for group, ctxs in group2ctxs.items():
        # one context (alone or in a list) serves every device, as in MXNet
        ctxs = list(ctxs) if isinstance(ctxs, (list, tuple)) else [ctxs]
        if len(ctxs) == 1:
            ctxs = ctxs * num_device
        if len(ctxs) != num_device:
            raise ValueError('group2ctxs: group %r has %d contexts for %d devices (give 1 or %d)'
                             % (group, len(ctxs), num_device, num_device))
        for i, ctx in enumerate(ctxs):
            per_device[i][group] = ctx
    return per_device


class DataParallelExecutorGroup:
    """Executors of one symbol on several contexts, fed slices of each batch.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of float
        Relative share of each context in a batch.
    data_shapes, label_shapes : list of DataDesc
        Full-batch shapes (labels may be empty).
    param_names : list of str
        Arguments that are learned parameters.
    for_training, inputs_need_grad : bool
    shared_group : DataParallelExecutorGroup, optional
        A group whose parameter arrays (and their gradients) this one uses too.
    fixed_param_names : list of str, optional
        Parameters that get no gradient.
    grad_req : str, list or dict
        ``'write'``, ``'add'`` or ``'null'`` for all, per argument in order, or by name.
    state_names : list of str, optional
        Arguments holding recurrent states (set by the user, not learned).
    group2ctxs : dict of str -> list of Context, or list of dict of str -> Context, optional
        Model parallelism: the context of each ``ctx_group`` attribute value, per device.

    Example
    -------
    Modules make these; here two CPU contexts share each batch of 4 equally:

    >>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    >>> group = mx.module.executor_group.DataParallelExecutorGroup(
    ...     net, [mx.cpu(0), mx.cpu(1)], [1, 1], [mx.io.DataDesc('data', (4, 3))], None,
    ...     ['fc_weight', 'fc_bias'], for_training=False, inputs_need_grad=False)
    >>> group.slices
    [slice(0, 2, None), slice(2, 4, None)]
    >>> group.set_params({'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros(2)}, {})
    >>> group.forward(mx.io.DataBatch([mx.nd.ones((4, 3))]), is_train=False)
    >>> [out.context for out in group.get_outputs(merge_multi_context=False)[0]]
    [cpu(0), cpu(1)]
    >>> group.get_outputs()[0]                   # merged
    <BLANKLINE>
    [[3. 3.]
     [3. 3.]
     [3. 3.]
     [3. 3.]]
    <NDArray 4x2 @cpu(0)>
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names, for_training,
                 inputs_need_grad, shared_group=None, logger=logging, fixed_param_names=None, grad_req='write',
                 state_names=None, group2ctxs=None):
        self.symbol = symbol
        self.logger = logger
        self.group2ctxs = _group2ctx_per_device(group2ctxs, len(contexts))
        self.contexts = contexts
        self.workload = workload
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.state_names = list(state_names or [])
        # (name, shape) pairs are accepted as DataDescs, as in MXNet
        data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        label_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes or ()]
        self.data_names = [d.name for d in data_shapes]
        self.grad_req = self._grad_reqs(grad_req, set(fixed_param_names or ()))
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr('__layout__'))
                               for i in range(len(self.output_names))]
        self.execs = []
        # a shared group lends its arrays and its parameters' gradients (one set of
        # gradients for all of a BucketingModule's buckets, so grad_req='add' accumulates)
        shared_arrays = [dict(e.arg_dict, **e.aux_dict) for e in shared_group.execs] if shared_group else None
        shared_grads = [e.grad_dict for e in shared_group.execs] if shared_group else None
        # per context, the arrays of the arguments that are not parameters (inputs, and
        # parameters the group does not own), shared with the groups sharing this one
        self.shared_data_arrays = shared_group.shared_data_arrays if shared_group else \
            [{} for _ in self.contexts]
        self.bind_exec(data_shapes, label_shapes, shared_arrays, shared_grads)

    @property
    def _total_exec_bytes(self):
        """MXNet's memory figure of the executors: the sum of their ``debug_str`` totals
        (whole megabytes each; computed when read)."""
        return sum(e.allocated_bytes() >> 20 for e in self.execs)

    def _grad_reqs(self, grad_req, fixed):
        """The gradient request of every argument, by name."""
        if not self.for_training:
            return dict.fromkeys(self.arg_names, 'null')
        if isinstance(grad_req, (list, tuple)):
            return dict(zip(self.arg_names, grad_req))
        default = grad_req if isinstance(grad_req, str) else 'write'
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                reqs[name] = 'null' if name in fixed else default
            elif name in self.data_names:
                reqs[name] = default if self.inputs_need_grad else 'null'
            else:
                reqs[name] = 'null'
        if isinstance(grad_req, dict):
            reqs.update(grad_req)
        return reqs

    # ------------------------------------------------------------------ binding
    def bind_exec(self, data_shapes, label_shapes, reusable=None, reusable_grads=None):
        """(Re)bind the executors for new input shapes.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc
        reusable : list of dict, optional
            Per context, arrays by name to use again where shape and dtype still fit; by
            default the arrays of the current executors (so parameters are kept).
        reusable_grads : list of dict, optional
            The same for gradient arrays; by default the current executors' gradients.
        """
        self.data_shapes, self.label_shapes = list(data_shapes), list(label_shapes or [])
        self.label_names = [d.name for d in self.label_shapes]
        first = self.data_shapes[0]
        self.batch_size = first.shape[DataDesc.get_batch_axis(first.layout)]
        self.slices = split_batch(self.batch_size, self.workload)
        if reusable is None:
            reusable = [dict(e.arg_dict, **e.aux_dict) for e in self.execs] or [{}] * len(self.contexts)
        old_grads = reusable_grads or [e.grad_dict for e in self.execs] or [{}] * len(self.contexts)
        previous = self.execs
        self.execs = [self._bind_one(i, arrays, grads)
                      for i, (arrays, grads) in enumerate(zip(reusable, old_grads))]
        for before, after in zip(previous, self.execs):
            after.keep_monitor_of(before)       # a monitor survives new input shapes

    def _sliced_shapes(self, index):
        """Input shapes and dtypes seen by the executor of context ``index``."""
        shapes, dtypes = {}, {}
        part = self.slices[index]
        for desc in self.data_shapes + self.label_shapes:
            shape = list(desc.shape)
            axis = DataDesc.get_batch_axis(desc.layout)
            if axis >= 0:
                shape[axis] = part.stop - part.start
            shapes[desc.name], dtypes[desc.name] = tuple(shape), desc.dtype
        return shapes, dtypes

    def _bind_one(self, index, reusable, reusable_grads):
        """Bind the executor of context ``index``, taking arrays from ``reusable`` where they fit."""
        ctx = self.contexts[index]
        shapes, dtypes = self._sliced_shapes(index)
        # shapes and dtypes in one inference, float32 where nothing decides a dtype: as
        # MXNet's executor group, which binds with simple_bind
        known_shapes, known_dtypes = infer(self.symbol, shapes, dtypes)
        arg_shapes, _, aux_shapes = per_group(self.symbol, known_shapes)
        if any(s is None for s in arg_shapes + aux_shapes):
            raise MXNetError('Module cannot bind: the shapes of some arguments of %s cannot be inferred '
                             'from the inputs %s' % (self.arg_names, shapes))
        arg_types, _, aux_types = ([np.float32 if t is None else np_dtype(t) for t in group]
                                   for group in per_group(self.symbol, known_dtypes))

        # storage types as MXNet's simple_bind gives them: a csr data batch, a row_sparse
        # weight and its row_sparse gradient hold only their non-zeros
        stypes, grad_stypes = storage_types(self.symbol)
        # model parallelism: each array on the context of its ctx_group, as simple_bind's
        group2ctx = self.group2ctxs[index]
        contexts = argument_contexts(self.symbol, ctx, group2ctx) if group2ctx else {}

        def array(arrays, name, shape, dtype, stype='default'):
            found = _reused(arrays, name, shape, dtype)
            if found is not None and found.stype == stype:
                return found
            return nd.zeros(shape, ctx=contexts.get(name, ctx), dtype=dtype, stype=stype)
        shared_data = self.shared_data_arrays[index]

        def argument(name, shape, dtype):
            stype = stypes.get(name, 'default')
            if name in self.param_names:
                return array(reusable, name, shape, dtype, stype)
            found = _reused(shared_data, name, shape, dtype)
            if found is None or found.stype != stype:
                found = shared_data[name] = array(reusable, name, shape, dtype, stype)
            return found
        args = [argument(n, s, t) for n, s, t in zip(self.arg_names, arg_shapes, arg_types)]
        grads = [array(reusable_grads, n, s, t, grad_stypes.get(n, 'default')) if self.grad_req[n] != 'null'
                 else None for n, s, t in zip(self.arg_names, arg_shapes, arg_types)]
        aux = [array(reusable, n, s, t) for n, s, t in zip(self.aux_names, aux_shapes, aux_types)]
        return self.symbol.bind(ctx, args, args_grad=grads, grad_req=[self.grad_req[n] for n in self.arg_names],
                                aux_states=aux, group2ctx=self.group2ctxs[index])

    def reshape(self, data_shapes, label_shapes):
        """Rebind for new input shapes, keeping the parameter arrays."""
        if data_shapes == self.data_shapes and (label_shapes or []) == self.label_shapes:
            return
        self.bind_exec(data_shapes, label_shapes)

    # ------------------------------------------------------------------ arrays
    def _per_context(self, names, table):
        return [[getattr(e, table)[n] for e in self.execs] for n in names]

    @property
    def param_arrays(self):
        """Per parameter, its arrays on every context."""
        return self._per_context(self.param_names, 'arg_dict')

    @property
    def grad_arrays(self):
        """Per parameter, its gradient arrays on every context (None without gradient)."""
        return self._per_context(self.param_names, 'grad_dict')

    @property
    def aux_arrays(self):
        """Per auxiliary state, its arrays on every context."""
        return self._per_context(self.aux_names, 'aux_dict')

    @property
    def state_arrays(self):
        """Per state name, its arrays on every context."""
        return self._per_context(self.state_names, 'arg_dict')

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameter values into every context's executor."""
        for executor in self.execs:
            executor.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Write the average over contexts of each parameter and auxiliary state into the given
        host arrays (the contexts differ when they were updated separately)."""
        for names, arrays, out in ((self.param_names, self.param_arrays, arg_params),
                                   (self.aux_names, self.aux_arrays, aux_params)):
            for name, copies in zip(names, arrays):
                mean = sum(c.as_in_context(cpu()) for c in copies) / len(copies)
                mean.astype(out[name].dtype).copyto(out[name])

    def get_states(self, merge_multi_context=True):
        """The state arrays, merged over contexts or per context."""
        return self._maybe_merged(self.state_arrays, [0] * len(self.state_names), merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states from per-state lists of per-context arrays, or all to ``value``."""
        if (states is None) == (value is None):
            raise ValueError('set_states: give exactly one of states and value')
        for i, targets in enumerate(self.state_arrays):
            for j, target in enumerate(targets):
                if states is None:
                    target[:] = value
                else:
                    states[i][j].copyto(target)

    # ----------------------------------------------------------------- running
    def _load(self, descs, arrays):
        """Copy each context's slice of the batch arrays into its executor's inputs."""
        for desc, array in zip(descs, arrays):
            axis = DataDesc.get_batch_axis(desc.layout)
            for executor, part in zip(self.execs, self.slices):
                source = array if len(self.execs) == 1 else _slice(array, axis, part)
                source.copyto(executor.arg_dict[desc.name])

    def forward(self, data_batch, is_train=None):
        """Run every executor on its slice of ``data_batch`` (labels are loaded when bound and given).

        Parameters
        ----------
        data_batch : DataBatch
        is_train : bool, optional
            Defaults to ``for_training``.
        """
        self._load(self.data_shapes, data_batch.data)
        if self.label_shapes and data_batch.label:
            self._load(self.label_shapes, data_batch.label)
        train = self.for_training if is_train is None else is_train
        for executor in self.execs:
            executor.forward(is_train=train)

    def backward(self, out_grads=None):
        """Back-propagate every executor, with its slice of ``out_grads`` (full-batch arrays)."""
        if not self.for_training:
            raise MXNetError('backward: the module was bound with for_training=False')
        for executor, part in zip(self.execs, self.slices):
            sliced = None if out_grads is None else [
                _slice(g, axis, part).as_in_context(executor.outputs[0].context)
                for g, axis in zip(out_grads, self.output_layouts)]
            executor.backward(out_grads=sliced)

    def _maybe_merged(self, per_context, axes, merge):
        if not merge:
            return per_context
        return [_merge(arrays, axis) for arrays, axis in zip(per_context, axes)]

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward: per output, merged over contexts or as a list per context."""
        outputs = [[e.outputs[i] for e in self.execs] for i in range(len(self.output_names))]
        return self._maybe_merged(outputs, self.output_layouts, merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs, merged over contexts or as a list per context."""
        if not self.inputs_need_grad:
            raise MXNetError('get_input_grads: bind with inputs_need_grad=True first')
        axes = [DataDesc.get_batch_axis(d.layout) for d in self.data_shapes]
        return self._maybe_merged(self._per_context(self.data_names, 'grad_dict'), axes, merge_multi_context)

    def get_output_shapes(self):
        """``[(output name, full-batch shape)]``."""
        shapes = []
        for name, out, axis in zip(self.output_names, self.execs[0].outputs, self.output_layouts):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with each context's outputs and its slice of ``labels``.

        Parameters
        ----------
        labels : list of NDArray
            Full-batch labels, or with ``pre_sliced`` one list of labels per context.
        """
        for i, (executor, part) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                sliced = labels[i]
            elif len(self.execs) == 1:
                sliced = labels
            else:
                sliced = [_slice(label, DataDesc.get_batch_axis(desc.layout), part)
                          for label, desc in zip(labels, self.label_shapes)]
            eval_metric.update_dict(OrderedDict(zip(self.label_names, sliced)),
                                    OrderedDict(zip(self.output_names, executor.outputs)))

    def install_monitor(self, monitor):
        """Let ``monitor`` (an object with ``install(executor)``) watch every executor."""
        for executor in self.execs:
            monitor.install(executor)
