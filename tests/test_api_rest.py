"""The remaining names of MXNet 1.9.1's API: LBSGD, the OpenCV operators, handles and aliases.

Expected values were recorded from MXNet 1.9.1."""
import gc
import os

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

# 7 updates of w = [1, -2, 3] with gradients 2 * randn(3) (RandomState(0)), lr 0.1, wd 0.01,
# rescale_grad 0.5, clip_gradient 2, warmup over 1 epoch of 4 updates: MXNet 1.9.1's weights
_LBSGD_CASES = [
    (('linear', 0.9, 2), [-0.1882999986410141, -2.600109100341797, 2.6898539066314697]),
    (('power2', 0.0, 3), [0.49442198872566223, -2.315201997756958, 2.8225319385528564]),
    (('sqrt', 0.5, 1), [-0.22464999556541443, -2.577697992324829, 2.863922119140625]),
    (('lars', 0.9, 2), [0.20711299777030945, -2.3784239292144775, 2.7091760635375977]),
    (('other', 0.0, 2), [0.5505399703979492, -2.2637939453125, 2.8262460231781006]),
]


@pytest.mark.parametrize('case, expected', _LBSGD_CASES)
def test_lbsgd_matches_mxnet(case, expected):
    strategy, momentum, batch_scale = case
    opt = mx.optimizer.create('lbsgd', learning_rate=0.1, momentum=momentum, wd=0.01, batch_scale=batch_scale,
                              warmup_strategy=strategy, warmup_epochs=1, updates_per_epoch=4, rescale_grad=0.5,
                              clip_gradient=2.0)
    assert isinstance(opt, mx.optimizer.optimizer.LBSGD)
    update = mx.optimizer.get_updater(opt)
    weight = mx.nd.array([1., -2., 3.])
    rng = np.random.RandomState(0)
    for _ in range(7):
        update(0, mx.nd.array(rng.randn(3) * 2), weight)
    np.testing.assert_allclose(weight.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_lbsgd_multi_precision():
    opt = mx.optimizer.LBSGD(learning_rate=0.5, multi_precision=True, batch_scale=1, warmup_epochs=0)
    update = mx.optimizer.get_updater(opt)
    weight = mx.nd.array([1., 2.], dtype='float16')
    update(0, mx.nd.array([1., 1.], dtype='float16'), weight)
    assert weight.dtype == np.float16 and weight.asnumpy().tolist() == [0.5, 1.5]


def _png(tmp_path):
    cv2 = pytest.importorskip('cv2')
    img = np.random.RandomState(0).randint(0, 255, (5, 7, 3)).astype(np.uint8)
    path = str(tmp_path / 'img.png')
    cv2.imwrite(path, img)       # BGR on disk
    return img, path


def test_cv_decode_and_read(tmp_path):
    img, path = _png(tmp_path)
    with open(path, 'rb') as f:
        buf = mx.nd.array(np.frombuffer(f.read(), np.uint8), dtype='uint8')
    rgb = mx.nd._internal._cvimdecode(buf)
    assert rgb.dtype == np.uint8 and (rgb.asnumpy() == img[:, :, ::-1]).all()
    assert (mx.nd._internal._cvimdecode(buf, to_rgb=False).asnumpy() == img).all()
    assert mx.nd._internal._cvimdecode(buf, flag=0).shape == (5, 7, 1)
    assert (mx.nd._internal._cvimread(filename=path).asnumpy() == img[:, :, ::-1]).all()
    with pytest.raises(MXNetError, match='uint8'):
        mx.nd._internal._cvimdecode(buf.astype('float32'))
    with pytest.raises(MXNetError, match="couldn't open file"):
        mx.nd._internal._cvimread(filename=os.path.join(str(tmp_path), 'missing.png'))


def test_cv_resize_and_border():
    img = mx.nd.array(np.arange(24).reshape(2, 4, 3), dtype='uint8')
    assert mx.nd._internal._cvimresize(img, w=8, h=4).shape == (4, 8, 3)
    assert (mx.nd._internal._cvimresize(img, w=4, h=2, interp=0).asnumpy() == img.asnumpy()).all()
    padded = mx.nd._internal._cvcopyMakeBorder(img, top=1, bot=2, left=0, right=1, values=(1, 2, 3))
    assert padded.shape == (5, 5, 3) and padded.asnumpy()[0, 0].tolist() == [1, 2, 3]
    edge = mx.nd._internal._cvcopyMakeBorder(img, top=0, bot=0, left=2, right=0, type=1)
    assert edge.asnumpy()[:, :3, 0].tolist() == [[0, 0, 0], [12, 12, 12]]
    assert (mx.image.copyMakeBorder(img, 0, 0, 2, 0, type=1).asnumpy() == edge.asnumpy()).all()
    sym = mx.sym._internal._cvcopyMakeBorder(mx.sym.var('x'), top=1, bot=1, left=2, right=0)
    assert sym.infer_shape(x=(2, 4, 3))[1] == [(4, 6, 3)]


def test_new_empty_handle_and_aliases():
    from neomx.ndarray.ndarray import _new_empty_handle
    handle = _new_empty_handle()
    gc.collect()        # the handle alone keeps the array until it is wrapped
    assert mx.nd.NDArray(handle).shape == ()
    assert mx.autograd.NDArray is mx.nd.NDArray and mx.autograd.Symbol is mx.sym.Symbol
    assert mx.test_utils.np_symbol is mx.sym.np._Symbol


def test_profiler_kvstore_handle():
    previous = mx.profiler.profiler_kvstore_handle
    try:
        mx.profiler.set_kvstore_handle(mx.base.KVStoreHandle(7))
        assert mx.profiler.profiler_kvstore_handle.value == 7
    finally:
        mx.profiler.set_kvstore_handle(previous)


def test_metric_register_and_alias_take_mxnet_arguments():
    class HalfAccuracy(mx.metric.Accuracy):
        pass
    registry = mx.metric._REGISTRY
    saved = dict(registry)
    try:
        mx.metric.register(HalfAccuracy, name='Half_Acc')
        assert isinstance(mx.metric.create('half_acc'), HalfAccuracy)
        mx.metric.alias('halfacc2')(HalfAccuracy)
        assert isinstance(mx.metric.create('halfacc2'), HalfAccuracy)
        with pytest.warns(UserWarning, match='overriding'):
            mx.metric.register(HalfAccuracy, name='acc')
        with pytest.raises(AssertionError):
            mx.metric.register(int)
    finally:
        registry.clear()
        registry.update(saved)


def test_kvstore_server_controller_and_role():
    import pickle
    server = mx.kvstore.KVStoreServer(mx.kv.create('local'))
    assert mx.kvstore.kvstore_server.KVStoreServer is mx.kvstore.KVStoreServer
    server.init_logginig = True     # the first command sets up the root logger otherwise
    server._controller()(0, pickle.dumps(mx.optimizer.SGD(learning_rate=0.25)), None)
    assert server.kvstore._updater.optimizer.lr == 0.25
    with pytest.raises(MXNetError, match='only a server or scheduler'):
        server.run()        # this test process is a worker


def test_wikitext_reads_local_files(tmp_path):
    (tmp_path / 'wiki.test.tokens').write_text(' = Title = \n\n a b a \n', encoding='utf8')
    data = mx.gluon.contrib.data.text.WikiText2(str(tmp_path), segment='test', seq_len=3)
    # MXNet 1.9.1 on the same file: the vocabulary, counts and samples
    assert data.vocabulary.idx_to_token[:5] == ['<unk>', '<eos>', '=', 'a', 'Title']
    assert dict(data.frequencies) == {'=': 2, 'a': 2, 'Title': 1, 'b': 1}
    assert len(data) == 2 and data[0][0].dtype == np.int32
    assert [t.asnumpy().tolist() for t in data[0]] == [[2, 4, 2], [4, 2, 1]]
    shared = mx.gluon.contrib.data.text.WikiText103(str(tmp_path), segment='test', vocab=data.vocabulary, seq_len=2)
    assert shared.vocabulary is data.vocabulary and shared.frequencies is not None
    with pytest.raises(KeyError):
        mx.gluon.contrib.data.text.WikiText2(str(tmp_path), segment='dev')


def _feedforward_run(tmp_path):
    """FeedForward trained on 2 CPU contexts; values recorded from MXNet 1.9.1 on the same script."""
    import warnings
    rng = np.random.RandomState(0)
    x = rng.randn(20, 3).astype('float32')
    y = (x[:, 0] > 0).astype('float32')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc'), name='softmax')
    arg = {'fc_weight': mx.nd.array(rng.randn(2, 3) * 0.1), 'fc_bias': mx.nd.zeros(2)}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        model = mx.model.FeedForward(net, ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=3, arg_params=arg,
                                     learning_rate=0.3, momentum=0.9)
        seen = []
        model.fit(mx.io.NDArrayIter(x, y, batch_size=4), eval_data=mx.io.NDArrayIter(x, y, batch_size=4),
                  batch_end_callback=lambda p: seen.append(p.nbatch),
                  epoch_end_callback=lambda e, s, a, au: seen.append(('end', e)))
    return model, seen, x, y


def test_feedforward_matches_mxnet(tmp_path):
    import warnings
    model, seen, x, y = _feedforward_run(tmp_path)
    assert seen == [1, 2, 3, 4, 5, ('end', 0)] + [1, 2, 3, 4, 5, ('end', 1)] + [1, 2, 3, 4, 5, ('end', 2)]
    np.testing.assert_allclose(model.arg_params['fc_weight'].asnumpy(),
                               [[-3.88352, -0.22858, 0.55737], [3.64364, 0.21037, -0.67886]], atol=2e-5)
    np.testing.assert_allclose(model.arg_params['fc_bias'].asnumpy(), [0.09163, -0.09163], atol=2e-5)
    pred = model.predict(mx.io.NDArrayIter(x[:5], y[:5], batch_size=2))       # the padding removed
    np.testing.assert_allclose(pred[:, 1], [0.99999, 1.0, 0.99912, 0.76365, 0.99363], atol=2e-5)
    assert model.score(mx.io.NDArrayIter(x, y, batch_size=6)) == 1.0
    _, data, label = model.predict(mx.io.NDArrayIter(x[:3], y[:3], batch_size=2), return_data=True)
    assert data.shape == (3, 3) and label.tolist() == [1.0, 1.0, 1.0]
    prefix = str(tmp_path / 'ff')
    model.save(prefix, 3)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        loaded = mx.model.FeedForward.load(prefix, 3)
    assert loaded.begin_epoch == 3
    np.testing.assert_allclose(loaded.predict(x[:2]), pred[:2], atol=1e-6)
    with pytest.raises(ValueError, match='y must be specified'):
        loaded.fit(x)


def test_executor_manager_splits_batches():
    from neomx.executor_manager import _split_input_slice
    assert _split_input_slice(10, [1, 1, 2]) == [slice(0, 2), slice(2, 4), slice(4, 10)]
    with pytest.raises(ValueError, match='Too many slices'):
        _split_input_slice(2, [1, 1, 1])
    assert mx.model.DataParallelExecutorManager is mx.executor_manager.DataParallelExecutorManager
    assert mx.model.LogValidationMetricsCallback is mx.callback.LogValidationMetricsCallback


def test_notebook_pandas_logger(monkeypatch):
    pytest.importorskip('pandas')
    logger = mx.notebook.callback.PandasLogger(batch_size=4, frequent=2)
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.8, 0.2]])])
    logger.train_cb(mx.model.BatchEndParam(epoch=0, nbatch=1, eval_metric=metric, locals=None))   # not every batch
    assert len(logger.train_df) == 0
    logger.train_cb(mx.model.BatchEndParam(epoch=1, nbatch=2, eval_metric=metric, locals=None))
    row = logger.train_df.iloc[0]
    assert (row['accuracy'], row['minibatch_count'], row['epoch']) == (0.5, 2, 1)
    assert metric.num_inst == 0          # the logger resets the metric it recorded
    logger.epoch_cb(0, None, {}, {})      # as fit's epoch_end_callback calls it
    assert set(logger.epoch_df.columns) == {'elapsed', 'epoch_time'} and len(logger.epoch_df) == 1
    args = mx.notebook.callback.args_wrapper(logger, logger)
    assert args['eval_end_callback'] == [logger.eval_cb, logger.eval_cb]


def test_notebook_names_the_missing_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, 'pandas', None)       # import pandas fails
    with pytest.raises(ImportError, match=r'neomx\[notebook\]'):
        mx.notebook.callback.PandasLogger(batch_size=4)
    monkeypatch.setitem(sys.modules, 'bokeh', None)
    assert mx.notebook.bokeh is mx.notebook.Bokeh_Failed_To_Import
    with pytest.raises(ImportError, match=r'neomx\[notebook\]'):
        mx.notebook.callback.LiveLearningCurve('accuracy')


def test_backward_hawkesll_is_the_gradient_of_hawkesll():
    rng = np.random.RandomState(0)
    lda, alpha, beta = mx.nd.array(rng.rand(2, 3) + 0.5), mx.nd.array([0.2, 0.3, 0.4]), mx.nd.array([1., 2., 3.])
    state, lags = mx.nd.zeros((2, 3)), mx.nd.array(rng.rand(2, 4))
    marks, valid, end = mx.nd.array([[0, 1, 2, 0], [1, 1, 0, 2]]), mx.nd.array([4, 3]), mx.nd.array([5., 4.])
    head = mx.nd.array([1., 2.])
    grads = mx.nd.contrib.backward_hawkesll(head, mx.nd.zeros((2, 3)), lda, alpha, beta, state, lags, marks,
                                            valid, end)
    assert [g.shape for g in grads] == [(2, 3), (3,), (3,), (2, 3), (2, 4), (2, 4), (2,), (2,)]
    for v in (lda, alpha, beta):
        v.attach_grad()
    with mx.autograd.record():
        loglik, _ = mx.nd.contrib.hawkesll(lda, alpha, beta, state, lags, marks, valid, end)
    loglik.backward(head)
    for mine, recorded in zip(grads[:3], (lda.grad, alpha.grad, beta.grad)):
        np.testing.assert_allclose(mine.asnumpy(), recorded.asnumpy(), rtol=1e-6)
    assert all(float(g.abs().sum().asscalar()) == 0 for g in grads[3:])
    with pytest.raises(MXNetError, match='backward_hawkesll'):
        mx.nd.contrib.backward_hawkesll(head[:1], mx.nd.zeros((2, 3)), lda, alpha, beta, state, lags, marks,
                                        valid, end)


def test_quantized_rnn_runs_the_lstm_on_the_dequantized_data():
    steps, batch, inputs, hidden = 3, 2, 4, 5
    rng = np.random.RandomState(0)
    x = rng.rand(steps, batch, inputs).astype('float32')
    params = mx.nd.array(rng.randn(4 * hidden * (inputs + hidden) + 8 * hidden) * 0.3)
    h0, c0 = mx.nd.zeros((1, batch, hidden)), mx.nd.zeros((1, batch, hidden))
    q, scale, shift = mx.nd.contrib.quantize_asym(mx.nd.array(x))
    out, h, c = mx.nd.contrib.quantized_rnn(q, params, h0, c0, scale, shift, state_size=hidden, num_layers=1,
                                            mode='lstm', state_outputs=True)
    dequantized = (q.asnumpy().astype(np.float32) - shift.asscalar()) / scale.asscalar()
    ref, ref_h, ref_c = mx.nd.RNN(mx.nd.array(dequantized), params, h0, c0, state_size=hidden, num_layers=1,
                                  mode='lstm', state_outputs=True)
    assert out.dtype == np.float32 and out.shape == (steps, batch, hidden) and h.shape == (1, batch, hidden)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), ref_c.asnumpy(), rtol=1e-5, atol=1e-6)
    assert np.abs(out.asnumpy() - mx.nd.RNN(mx.nd.array(x), params, h0, c0, state_size=hidden, num_layers=1,
                                            mode='lstm').asnumpy()).max() < 2e-3      # within the data's rounding
    with pytest.raises(MXNetError, match="only supports LSTM"):
        mx.nd.contrib.quantized_rnn(q, params, h0, c0, scale, shift, state_size=hidden, num_layers=1, mode='gru')


def test_mkldnn_fused_attention_graph_from_mxnet():
    """A graph MXNet 1.9.1's optimize_for('MKLDNN') wrote (_sg_mkldnn_selfatt_qk/valatt nodes
    carrying their original operators as subgraphs) computes MXNet's values."""
    here = os.path.join(os.path.dirname(__file__), 'data')
    net = mx.sym.load(os.path.join(here, 'mkldnn_selfatt-symbol.json'))
    ref = np.load(os.path.join(here, 'mkldnn_selfatt_mxnet.npz'))
    out = net.eval(qkv=mx.nd.array(ref['x']))[0]
    np.testing.assert_allclose(out.asnumpy(), ref['y'], rtol=1e-5, atol=1e-6)
    qkv = mx.nd.array(ref['x'])
    fused = mx.nd._internal._sg_mkldnn_selfatt_qk(qkv, heads=2)
    assert (fused.asnumpy() == mx.nd.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2).asnumpy()).all()
    with pytest.raises(MXNetError, match='quantized=True'):
        mx.nd._internal._sg_mkldnn_selfatt_valatt(qkv, fused, heads=2, quantized=True)


def test_mkldnn_fused_conv_and_fc_graph_from_mxnet():
    """Conv + BatchNorm + ReLU and FullyConnected + ReLU as MXNet's optimize_for('MKLDNN')
    fused them (_sg_mkldnn_conv, _sg_mkldnn_fully_connected): MXNet's arguments, auxiliary
    states, shapes and values."""
    here = os.path.join(os.path.dirname(__file__), 'data')
    net = mx.sym.load(os.path.join(here, 'mkldnn_conv_fc-symbol.json'))
    assert net.list_arguments() == ['data', 'conv_weight', 'conv_bias', 'bn_gamma', 'bn_beta', 'fc_weight', 'fc_bias']
    assert net.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert net.infer_shape(data=(2, 3, 6, 6))[0][5] == (3, 64)
    ref = np.load(os.path.join(here, 'mkldnn_conv_fc_mxnet.npz'))
    args = {k[4:]: mx.nd.array(ref[k]) for k in ref.files if k.startswith('arg_')}
    aux = {k[4:]: mx.nd.array(ref[k]) for k in ref.files if k.startswith('aux_')}
    out = net.bind(mx.cpu(), args, aux_states=aux).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), ref['y'], rtol=1e-4, atol=1e-4)
    with pytest.raises(MXNetError, match='needs the subgraph'):
        mx.nd._internal._sg_mkldnn_conv(mx.nd.ones(2))
