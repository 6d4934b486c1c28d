"""mx.io: DataDesc, DataBatch and NDArrayIter's batching, padding and roll-over."""
import numpy as np
import pytest

import neomx as mx

X = np.arange(14, dtype='float32').reshape(7, 2)
Y = np.arange(7, dtype='int64')


def _epoch(it):
    return [(b.data[0].asnumpy(), b.label[0].asnumpy() if b.label else None, b.pad) for b in it]


def test_pad_wraps_around_to_the_first_samples():
    batches = _epoch(mx.io.NDArrayIter(X, Y, batch_size=3))
    assert [b[2] for b in batches] == [0, 0, 2]
    np.testing.assert_array_equal(batches[2][0], X[[6, 0, 1]])
    np.testing.assert_array_equal(batches[2][1], [6, 0, 1])
    assert batches[2][1].dtype == np.float32            # labels are float32, as in MXNet


def test_discard_drops_the_incomplete_batch():
    batches = _epoch(mx.io.NDArrayIter(X, Y, batch_size=3, last_batch_handle='discard'))
    assert len(batches) == 2
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), X[:6])


def test_roll_over_carries_the_tail_into_the_next_epoch():
    it = mx.io.NDArrayIter(X, Y, batch_size=3, last_batch_handle='roll_over')
    first = _epoch(it)
    assert len(first) == 2
    it.reset()
    second = _epoch(it)
    np.testing.assert_array_equal(second[0][0], X[[6, 0, 1]])
    assert second[0][2] == 1                            # MXNet reports the carried count as pad
    np.testing.assert_array_equal(second[1][0], X[2:5])
    it.hard_reset()
    np.testing.assert_array_equal(_epoch(it)[0][0], X[:3])


def test_names_descs_and_dict_inputs():
    it = mx.io.NDArrayIter({'b': X, 'a': X * 2}, {'lab': Y}, batch_size=2)
    assert [d.name for d in it.provide_data] == ['a', 'b']   # sorted by name
    desc = it.provide_label[0]
    assert (desc.name, desc.shape, desc.dtype, desc.layout) == ('lab', (2,), np.float32, 'NCHW')
    several = mx.io.NDArrayIter([X, X], batch_size=2)
    assert [d.name for d in several.provide_data] == ['_0_data', '_1_data']
    assert several.provide_label == []
    assert repr(mx.io.DataDesc('x', (1, 2))) == "DataDesc[x,(1, 2),<class 'numpy.float32'>,NCHW]"
    assert mx.io.DataDesc.get_batch_axis('TNC') == 1


def test_shuffle_permutes_samples_consistently():
    np.random.seed(0)
    it = mx.io.NDArrayIter(X, np.arange(7, dtype='float32'), batch_size=7, shuffle=True)
    batch = next(it)
    np.testing.assert_array_equal(batch.data[0].asnumpy()[:, 0] / 2, batch.label[0].asnumpy())
    assert sorted(batch.label[0].asnumpy()) == list(range(7))


def test_iteration_protocol_and_errors():
    it = mx.io.NDArrayIter(X, Y, batch_size=4)
    assert len(_epoch(it)) == 2 and _epoch(it) == []       # exhausted until reset
    it.reset()
    assert it.next().data[0].shape == (4, 2)
    with pytest.raises(ValueError):
        mx.io.NDArrayIter(X, batch_size=2, last_batch_handle='nope')
    short = mx.io.NDArrayIter(X, Y[:5], batch_size=2)    # as MXNet: fails at the batch
    with pytest.raises(mx.base.MXNetError, match='5 samples'):
        _epoch(short)
    longer = mx.io.NDArrayIter(X[:4], Y, batch_size=2)   # longer labels are cut
    assert [b.label[0].shape for b in longer] == [(2,), (2,)]
    wide = mx.io.NDArrayIter(X, batch_size=8)      # as MXNet: one batch, wrapped around
    assert [b.pad for b in wide] == [1]


def test_resize_and_prefetching_iters():
    resized = mx.io.ResizeIter(mx.io.NDArrayIter(X, Y, batch_size=3, last_batch_handle='discard'), 5)
    assert len(list(resized)) == 5
    base = mx.io.NDArrayIter(X, Y, batch_size=3, last_batch_handle='discard')
    prefetch = mx.io.PrefetchingIter(base)
    batches = [b.data[0].asnumpy() for b in prefetch]
    np.testing.assert_array_equal(np.concatenate(batches), X[:6])
    prefetch.reset()
    assert len(list(prefetch)) == 2
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2,))], pad=0)
    assert str(batch) == 'DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]'
