"""mx.contrib's Python modules: autograd (the first interface), io.DataLoaderIter, text
(vocabulary, embeddings from local files) and svrg_optimization."""
import collections

import numpy as np
import pytest

import neomx as mx
from neomx.contrib import autograd as cag
from neomx.contrib import text


def test_contrib_autograd_grad_and_loss_and_sections():
    x, y = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    grads, loss = cag.grad_and_loss(lambda a, b: a * b, argnum=[0, 1])(x, y)
    assert [g.asnumpy().tolist() for g in grads] == [[3, 4], [1, 2]]
    assert loss.asnumpy().tolist() == [3, 8]
    with cag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with cag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    assert not mx.autograd.is_recording()


def test_dataloader_iter_pads_the_last_batch():
    data = mx.nd.arange(10).reshape((5, 2))
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data, mx.nd.arange(5)), batch_size=2)
    it = mx.contrib.io.DataLoaderIter(loader, dtype='float64')
    assert it.provide_data[0].shape == (2, 2) and it.provide_label[0].name == 'softmax_label'
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    last = batches[-1]
    assert last.data[0].dtype == np.float64 and last.data[0].asnumpy().tolist() == [[8, 9], [0, 0]]
    it.reset()
    assert len(list(it)) == 3


def test_vocabulary_order_limits_and_errors():
    counter = collections.Counter(['c', 'b', 'b', 'a', 'a', 'a', 'd'])
    vocab = text.vocab.Vocabulary(counter, most_freq_count=2, min_freq=1, reserved_tokens=['<pad>'])
    assert vocab.idx_to_token == ['<unk>', '<pad>', 'a', 'b']
    assert vocab.to_indices(['b', 'zzz']) == [3, 0] and vocab.to_tokens(2) == 'a'
    with pytest.raises(ValueError):
        vocab.to_tokens(9)
    with pytest.raises(AssertionError):
        text.vocab.Vocabulary(counter, reserved_tokens=['<unk>'])
    assert text.utils.count_tokens_from_str('A a\nb', to_lower=True) == collections.Counter({'a': 2, 'b': 1})


def test_custom_and_composite_embeddings(tmp_path):
    path = tmp_path / 'vecs.txt'
    path.write_text('<unk> 9 9\na 1 2\nb 3 4\nb 5 6\n')
    with pytest.warns(UserWarning, match='duplicate'):
        emb = text.embedding.CustomEmbedding(str(path))
    assert emb.idx_to_token == ['<unk>', 'a', 'b'] and emb.vec_len == 2
    assert emb.get_vecs_by_tokens(['b', 'zz']).asnumpy().tolist() == [[3, 4], [9, 9]]
    assert emb.get_vecs_by_tokens('A', lower_case_backup=True).asnumpy().tolist() == [1, 2]
    emb.update_token_vectors('a', mx.nd.array([7, 7]))
    assert emb.get_vecs_by_tokens('a').asnumpy().tolist() == [7, 7]
    with pytest.raises(ValueError):
        emb.update_token_vectors('zz', mx.nd.array([0, 0]))
    vocab = text.vocab.Vocabulary(collections.Counter(['b', 'c']))
    comp = text.embedding.CompositeEmbedding(vocab, [emb, emb])
    assert comp.idx_to_vec.asnumpy().tolist() == [[9, 9, 9, 9], [3, 4, 3, 4], [9, 9, 9, 9]]
    assert len(text.embedding.get_pretrained_file_names('fasttext')) == 327
    with pytest.raises(KeyError):
        text.embedding.get_pretrained_file_names('nope')


def test_svrg_module_full_gradient_and_update_rule():
    from neomx.contrib.svrg_optimization.svrg_module import SVRGModule
    data = mx.sym.var('data')
    out = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=1, no_bias=True, name='fc'),
                                        name='lro')
    with pytest.raises(ValueError):
        SVRGModule(out, label_names=['lro_label'], update_freq=0)
    rng = np.random.RandomState(0)
    x = rng.rand(16, 3).astype('float32')
    y = x.dot(np.array([1.0, -2.0, 0.5], dtype='float32'))
    it = mx.io.NDArrayIter(x, y, batch_size=4, label_name='lro_label')
    mod = SVRGModule(out, label_names=['lro_label'], update_freq=2)
    mod.fit(it, num_epoch=30, eval_metric='mse', optimizer_params=(('learning_rate', 0.5),),
            initializer=mx.init.Zero())
    weight = mod.get_params()[0]['fc_weight'].asnumpy().ravel()
    np.testing.assert_allclose(weight, [1.0, -2.0, 0.5], atol=0.05)
