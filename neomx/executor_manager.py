"""``mx.executor_manager``: data-parallel executors for the legacy :class:`~neomx.model.FeedForward`.

A :class:`DataParallelExecutorManager` binds a Symbol on each context of a list, each
getting a slice of every batch (sized by ``work_load_list``), and keeps one group of such
executors per bucket for networks made by a ``sym_gen`` (buckets share the parameters).
``forward``/``backward`` run every device's executor; the gradients stay per device for a
KVStore or an updater to combine (see ``mx.model``). ``mx.mod.Module`` is the newer API
built the same way.

Example
-------
>>> data = mx.sym.var('data')
>>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), name='softmax')
>>> it = mx.io.NDArrayIter(np.ones((4, 3)), np.zeros(4), batch_size=4)
>>> names = net.list_arguments()
>>> manager = mx.executor_manager.DataParallelExecutorManager(
...     net, [mx.cpu(0), mx.cpu(1)], it, names, ['fc_weight', 'fc_bias'], [])
>>> manager.set_params({'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros(2)}, {})
>>> manager.load_data_batch(next(it))
>>> manager.forward(is_train=True)
>>> manager.backward()
>>> [g.shape for g in manager.grad_arrays[0]]       # fc_weight's gradient on each device
[(2, 3), (2, 3)]
"""
import logging

from .context import cpu
from .io import DataDesc
from .ndarray import ndarray as nd

__all__ = ['DataParallelExecutorGroup', 'DataParallelExecutorManager', 'DataDesc', 'cpu']


def _split_input_slice(batch_size, work_load_list):
    """The slice of a batch each device gets, in proportion to ``work_load_list``.

    Raises ValueError when a device would get no sample.
    """
    total = sum(work_load_list)
    counts = [round(load * batch_size / total) for load in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for count in counts:
        begin = int(min(end, batch_size))
        end = int(min(begin + count, batch_size))
        if begin >= end:
            raise ValueError('Too many slices. Some splits are empty.')
        slices.append(slice(begin, end))
    return slices


def check_arguments(symbol):
    """ValueError where ``symbol`` has two arguments (or auxiliary states) of one name."""
    arg_names = symbol.list_arguments()
    seen = set()
    for name in arg_names:
        if name in seen:
            raise ValueError('Find duplicated argument name "%s", please make the weight name non-duplicated(using '
                             'name arguments), arguments are %s' % (name, arg_names))
        seen.add(name)
    aux_names = symbol.list_auxiliary_states()
    seen = set()
    for name in aux_names:
        if name in seen:
            raise ValueError('Find duplicated auxiliary param name "%s", please make the weight name '
                             'non-duplicated(using name arguments), arguments are %s, auxiliary params are %s'
                             % (name, arg_names, aux_names))
        seen.add(name)


def _load_general(data, targets):
    """Copy each array of ``data`` into its target: an NDArray, or ``(slice, NDArray)`` pairs."""
    for src, dst in zip(data, targets):
        if isinstance(dst, nd.NDArray):
            src.copyto(dst)
            continue
        if dst[-1][0].stop != src.shape[0]:
            raise ValueError('Batch size miss match. Expected %d, got %d' % (dst[-1][0].stop, src.shape[0]))
        for part, array in dst:
            src[part].copyto(array)


def load_data(batch, targets):
    """Copy a batch's data arrays into ``targets`` (see :func:`_load_general`)."""
    _load_general(batch.data, targets)


def _load_label(batch, targets):
    _load_general(batch.label, targets)


# MXNet's names of the two helpers that mx.model uses too
_check_arguments, _load_data = check_arguments, load_data


def _descs(provided):
    return [d if isinstance(d, DataDesc) else DataDesc(*d) for d in provided]


class DataParallelExecutorGroup:
    """One Symbol bound on each context, each fed slice ``slices[i]`` of every batch.

    Parameters
    ----------
    sym : Symbol
    arg_names, param_names : list of str
        The symbol's arguments, and those of them that are learned parameters.
    ctx : list of Context
    slices : list of slice
        Each context's part of a batch.
    train_data : DataIter
        Gives the data and label names, shapes and dtypes (``provide_data``/``provide_label``).
    shared_group : DataParallelExecutorGroup, optional
        A group (another bucket's) whose parameter arrays this one uses.
    """

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None):
        check_arguments(sym)
        provided = _descs(train_data.provide_data) + _descs(train_data.provide_label)
        self.data_names = [d.name for d in _descs(train_data.provide_data)]
        self.label_names = [d.name for d in _descs(train_data.provide_label)]
        self.slices = slices
        self.train_execs = []
        for i, context in enumerate(ctx):
            shapes = {d.name: (slices[i].stop - slices[i].start,) + tuple(d.shape[1:]) for d in provided}
            types = {d.name: d.dtype for d in provided}
            grad_req = {name: ('write' if name in param_names else 'null') for name in arg_names}
            shared = shared_group.train_execs[i] if shared_group is not None else None
            self.train_execs.append(sym.simple_bind(context, grad_req=grad_req, type_dict=types,
                                                    shared_arg_names=param_names if shared else None,
                                                    shared_exec=shared, **shapes))
        self.data_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.train_execs)]
                            for name in self.data_names]
        self.label_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.train_execs)]
                             for name in self.label_names]
        self.param_idx = [i for i, name in enumerate(arg_names) if name in param_names]
        self.param_names = [arg_names[i] for i in self.param_idx]
        self.param_arrays = [[e.arg_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.aux_arrays = [[e.aux_arrays[i] for e in self.train_execs]
                           for i in range(len(sym.list_auxiliary_states()))]

    def load_data_batch(self, data_batch):
        """Copy a batch's data and labels into the executors' slices."""
        load_data(data_batch, self.data_arrays)
        _load_label(data_batch, self.label_arrays)

    def forward(self, is_train=False):
        """Run every executor forward."""
        for texec in self.train_execs:
            texec.forward(is_train=is_train)

    def backward(self):
        """Run every executor backward (gradients stay per device)."""
        for texec in self.train_execs:
            texec.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update ``metric`` with each device's outputs against its slice of ``labels``."""
        for i, (texec, part) in enumerate(zip(self.train_execs, self.slices)):
            labels_slice = labels[i] if pre_sliced else [label[part] for label in labels]
            metric.update(labels_slice, texec.outputs)


class DataParallelExecutorManager:
    """Executors of ``symbol`` (or of ``sym_gen``'s symbol per bucket) on the contexts ``ctx``.

    Parameters
    ----------
    symbol : Symbol
        The network (the default bucket's, with ``sym_gen``).
    ctx : list of Context
    train_data : DataIter
        Gives the batch size and the input names and shapes (and ``default_bucket_key``).
    arg_names, param_names, aux_names : list of str
    work_load_list : list of float, optional
        Each context's relative share of a batch; equal by default.
    logger : logging.Logger, optional
    sym_gen : callable(bucket_key) -> Symbol, optional
        Makes the network of each bucket (``data_batch.bucket_key``).

    Example
    -------
    >>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    >>> train = mx.io.NDArrayIter(np.ones((4, 3)), batch_size=4)
    >>> manager = mx.executor_manager.DataParallelExecutorManager(
    ...     net, [mx.cpu(0), mx.cpu(1)], train, net.list_arguments(), ['fc_weight', 'fc_bias'], [])
    >>> manager.set_params({'fc_weight': mx.nd.ones((2, 3)), 'fc_bias': mx.nd.zeros(2)}, {})
    >>> manager.load_data_batch(train.next())
    >>> manager.forward(is_train=False)
    >>> [out.shape for out in manager.curr_execgrp.train_execs[0].outputs]     # each context: 2 rows
    [(2, 2)]
    """

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names, work_load_list=None,
                 logger=None, sym_gen=None):
        self.logger = logger or logging
        num_device = len(ctx)
        self.logger.info('Start training with %s', str(ctx))
        if work_load_list is None:
            work_load_list = [1] * num_device
        if not isinstance(work_load_list, list) or len(work_load_list) != num_device:
            raise ValueError('Invalid settings for work load: work_load_list must be a list of one number per '
                             'context (%d), got %r' % (num_device, work_load_list))
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names, self.param_names, self.aux_names = arg_names, param_names, aux_names
        self.ctx = ctx
        self.execgrp = DataParallelExecutorGroup(symbol, arg_names, param_names, ctx, self.slices, train_data)
        self.symbol = symbol
        self.sym_gen = sym_gen
        self.curr_execgrp = None
        self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp} if sym_gen is not None else None
        self._train_data = train_data

    def install_monitor(self, monitor):
        """Have ``monitor`` watch every executor (not with ``sym_gen``, as in MXNet)."""
        if self.sym_gen is not None:
            raise NotImplementedError('Monitoring is not implemented for bucketing')
        for train_exec in self.execgrp.train_execs:
            monitor.install(train_exec)

    def set_params(self, arg_params, aux_params):
        """Copy parameters and auxiliary states (dicts of name -> NDArray) to every device."""
        for texec in self.execgrp.train_execs:
            texec.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Write the devices' mean of each parameter and auxiliary state into the given dicts."""
        for name, block in zip(self.param_names, self.param_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(arg_params[name].dtype).copyto(arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(aux_params[name].dtype).copyto(aux_params[name])

    @property
    def param_arrays(self):
        """Per parameter, its array on each device."""
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        """Per parameter, its gradient on each device."""
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        """Per auxiliary state, its array on each device."""
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Pick the batch's bucket (binding it on first sight) and load the batch into it."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                symbol = self.sym_gen(key)
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    symbol, self.arg_names, self.param_names, self.ctx, self.slices, data_batch,
                    shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def forward(self, is_train=False):
        """Run the current bucket's executors forward."""
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        """Run the current bucket's executors backward."""
        self.curr_execgrp.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update ``metric`` with the current bucket's outputs."""
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)

