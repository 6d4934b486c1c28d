"""Module-level names that downstream libraries (GluonCV, GluonNLP, Sockeye...) import from
MXNet's modules, private ones included, behave as MXNet's."""
import pytest

import neomx as mx


def test_gluon_loss_helpers_gluoncv_imports():
    from neomx.gluon.loss import _apply_weighting, _reshape_like
    x, y = mx.nd.arange(4), mx.nd.zeros((2, 2))
    assert _reshape_like(mx.nd, x, y).shape == (2, 2)
    sym = _reshape_like(mx.sym, mx.sym.var('x'), mx.sym.var('y'))
    assert sym.infer_shape(x=(4,), y=(2, 2))[1] == [(2, 2)]
    loss = _apply_weighting(mx.nd, mx.nd.ones((2, 2)), 2.0, mx.nd.array([[1], [0]]))
    assert loss.asnumpy().tolist() == [[2, 2], [0, 0]]


def test_gluon_utils_repo_urls(monkeypatch):
    from neomx.gluon.utils import _get_repo_file_url, _get_repo_url
    monkeypatch.delenv('MXNET_GLUON_REPO', raising=False)
    assert _get_repo_url() == 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://mirror/x')
    assert _get_repo_file_url('gluon/models', 'a.zip') == 'http://mirror/x/gluon/models/a.zip'


def test_model_update_helpers_as_mxnet():
    from neomx import model
    weights, grads = [[mx.nd.ones(2)]], [[mx.nd.ones(2)]]
    model._update_params(weights, grads, mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.5)), 1)
    assert weights[0][0].asnumpy().tolist() == [0.5, 0.5]
    store = mx.kv.create('local')
    store.set_optimizer(mx.optimizer.SGD(learning_rate=0.25))
    model._initialize_kvstore(store, weights, {'w': weights[0][0]}, ['w'], True)
    model._update_params_on_kvstore(weights, grads, store, ['w'])
    assert weights[0][0].asnumpy().tolist() == [0.25, 0.25]
    calls = []
    model._multiple_callbacks([calls.append, calls.append], 3)
    assert calls == [3, 3]
    assert model._create_sparse_kvstore('local')[1] is True
    with pytest.raises(TypeError):
        model._create_sparse_kvstore(3)


def test_optimizer_module_names():
    from neomx.optimizer.optimizer import SGD, Adam, _flatten_list
    assert SGD is mx.optimizer.SGD and Adam is mx.optimizer.Adam
    assert _flatten_list([[1], [2, 3]]) == [1, 2, 3]
    with pytest.raises(ImportError):
        from neomx.optimizer.optimizer import NoSuchOptimizer  # noqa: F401


def test_error_log_registry_misc_modules(tmp_path):
    assert issubclass(mx.error.InternalError, mx.MXNetError)
    assert 'MXNet hint' in str(mx.error.InternalError('x'))
    path = str(tmp_path / 'log.txt')
    logger = mx.log.get_logger('neomx.test.file', filename=path, level=mx.log.INFO)
    logger.info('hello')
    assert 'hello' in open(path).read()
    sched = mx.misc.FactorScheduler(step=2, factor=0.5)
    assert [sched(i) for i in range(4)] == [0.01, 0.01, 0.005, 0.005]
    with pytest.raises(ValueError):
        mx.misc.FactorScheduler(step=0)


def test_attribute_scope_is_per_thread():
    import threading
    seen = {}
    with mx.attribute.AttrScope(group='main'):
        def other():
            seen['other'] = mx.sym.var('b').attr('group')
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen['main'] = mx.sym.var('a').attr('group')
    assert seen == {'main': 'main', 'other': None}


def test_tensorboard_callback_writes_scalars_or_names_the_extra(monkeypatch):
    from neomx.contrib import tensorboard
    try:
        import tensorboard as _  # noqa: F401
    except ImportError:
        with pytest.raises(mx.MXNetError, match=r'neomx\[tensorboard\]'):
            tensorboard.LogMetricsCallback('unused')

    class Writer:
        def __init__(self, logdir):
            self.logdir, self.scalars = logdir, []

        def add_scalar(self, name, value, global_step):
            self.scalars.append((name, value, global_step))
    monkeypatch.setattr(tensorboard, '_summary_writer', Writer)
    cb = tensorboard.LogMetricsCallback('logs', prefix='train')
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0.1, 0.9], [0.2, 0.8]])])
    cb(mx.model.BatchEndParam(epoch=3, nbatch=0, eval_metric=metric, locals=None))
    assert cb.summary_writer.scalars == [('train-accuracy', 0.5, 3)]
