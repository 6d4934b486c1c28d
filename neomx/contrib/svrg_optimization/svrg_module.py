"""``SVRGModule``: a Module trained with stochastic variance-reduced gradients.

Every ``update_freq`` epochs the gradient over the whole training set is computed at the
current weights (the "special" weights, kept by an auxiliary module); each batch's update
then uses ``g(batch, w) - g(batch, w_special) + g(all, w_special)``.
"""
import logging
import time

from ... import metric as _metric
from ... import model as _model
from ... import ndarray as nd
from ... import optimizer as opt
from ...context import cpu
from ...initializer import Uniform
from ...module import Module
from .svrg_optimizer import _SVRGOptimizer

__all__ = ['SVRGModule', 'Module']


def _callbacks(given):
    return given if isinstance(given, (list, tuple)) else [given]


class SVRGModule(Module):
    """A :class:`Module` whose updates are variance-reduced (SVRG).

    Parameters are those of :class:`Module`, plus:

    update_freq : int
        Compute the full gradient every ``update_freq`` epochs (a positive integer).

    Example
    -------
    >>> import neomx as mx
    >>> data = mx.sym.var('data')
    >>> out = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=1, name='fc'), name='lro')
    >>> mod = mx.contrib.svrg_optimization.svrg_module.SVRGModule(out, label_names=['lro_label'], update_freq=2)
    >>> it = mx.io.NDArrayIter(mx.nd.ones((8, 3)), mx.nd.ones((8,)), batch_size=4, label_name='lro_label')
    >>> mod.fit(it, num_epoch=2, eval_metric='mse', optimizer_params=(('learning_rate', 0.1),))
    >>> sorted(mod.get_params()[0])
    ['fc_bias', 'fc_weight']
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',), logger=logging,
                 context=cpu(), work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list, fixed_param_names=fixed_param_names,
                         state_names=state_names, group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int):
            raise TypeError('update_freq in SVRGModule must be an integer to represent the frequency for '
                            'calculating full gradients')
        if update_freq <= 0:
            raise ValueError('update_freq in SVRGModule must be a positive integer to represent the frequency '
                             'for calculating full gradients')
        self.update_freq = update_freq
        # computes the gradients at the special weights (w_special)
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._param_dict = None
        self._ctx_len = len(self._context)

    def _reset_bind(self):
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def reshape(self, data_shapes, label_shapes=None):
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def init_optimizer(self, kvstore='local', optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
                       force_init=False):
        """Install an :class:`_SVRGOptimizer` around ``optimizer``; with a KVStore, also keys
        ``<name>_full`` holding the full gradients."""
        self._param_dict = [{key: nd.zeros(value.shape, ctx=self._context[i])
                             for key, value in self.get_params()[0].items()} for i in range(self._ctx_len)]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer,
                                                kvstore=kvstore, optimizer_params=optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer, optimizer_params=optimizer_params,
                               force_init=force_init)
        if self._kvstore:
            for idx, param_on_devs in enumerate(self._exec_group.param_arrays):
                name = self._exec_group.param_names[idx]
                self._kvstore.init(name + '_full', nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + '_full', param_on_devs, priority=-idx)

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The SVRG optimizer, its index-to-name map covering the ``<name>_full`` keys too."""
        batch_size = self._exec_group.batch_size
        kv_store, update_on_kvstore = _model.create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv_store and 'dist' in kv_store.type and '_sync' in kv_store.type:
            batch_size *= kv_store.num_workers
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(self._ctx_len):
                idx2name.update({i * self._ctx_len + k: n for i, n in enumerate(self._exec_group.param_names)})
        for key in self._param_dict[0]:
            idx2name[max(idx2name) + 1] = key + '_full'
        optimizer_params = dict(optimizer_params)
        optimizer_params.setdefault('rescale_grad', 1.0 / batch_size)
        optimizer_params['default_optimizer'] = default_opt
        optimizer_params['param_idx2name'] = idx2name
        return opt.create(optimizer, **optimizer_params)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind, shared_module,
                     grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                               shared_module, grad_req)

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace the gradients by their SVRG form, then update."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Average the gradients over all of ``train_data`` at the current weights, which
        become the special weights."""
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch, padding = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for ctx in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][ctx]
                    self._param_dict[ctx][name] = nd.broadcast_add(self._param_dict[ctx][name], grads, axis=0)
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in param_names:
            grad_list = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grad_list.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the full gradients of ``key`` over devices (and workers) through the KVStore."""
        self._kvstore.push(key + '_full', value)
        self._kvstore._barrier()
        self._kvstore.pull(key + '_full', value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """``g(batch, w) - g(batch, w_special) + g(all, w_special)``, in place in the first."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        param_names = self._exec_group.param_names
        for ctx in range(self._ctx_len):
            for index, name in enumerate(param_names):
                g_curr = self._exec_group.grad_arrays[index][ctx]
                g_special = self._mod_aux._exec_group.grad_arrays[index][ctx]
                g_svrg = self._svrg_grads_update_rule(g_curr, g_special, self._param_dict[ctx][name])
                self._exec_group.grad_arrays[index][ctx] = g_svrg

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
            eval_end_callback=None, eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False, begin_epoch=0,
            num_epoch=None, validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """Train as :meth:`Module.fit`, computing the full gradients every ``update_freq`` epochs."""
        assert num_epoch is not None, 'please specify number of epochs'
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            eval_metric.reset()
            tic = time.time()
            if epoch % self.update_freq == 0:
                self.update_full_grads(train_data)
            train_data.reset()
            data_iter = iter(train_data)
            end_of_batch, nbatch = False, 0
            next_data_batch = next(data_iter)
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch], pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_name_value()
                if batch_end_callback is not None:
                    params = _model.BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                                  locals=locals())
                    for callback in _callbacks(batch_end_callback):
                        callback(params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for callback in _callbacks(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
