"""gluon.contrib.data.IntervalSampler against MXNet 1.9.1's recorded orders."""
import pytest

from neomx import gluon
from neomx.gluon.contrib import data as contrib_data

IntervalSampler = contrib_data.IntervalSampler


@pytest.mark.parametrize('args, expected', [
    ((13, 3), [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]),
    ((13, 3, False), [0, 3, 6, 9, 12]),
    ((5, 5), [0, 1, 2, 3, 4]),
    ((5, 5, False), [0]),
    ((7, 1), [0, 1, 2, 3, 4, 5, 6]),
    ((10, 4, False), [0, 4, 8]),
    ((0, 0), []),
])
def test_order_matches_mxnet(args, expected):
    sampler = IntervalSampler(*args)
    assert list(sampler) == expected
    # MXNet reports the full length even when rollover=False yields fewer indices
    assert len(sampler) == args[0]
    assert list(sampler) == expected        # iterable more than once


def test_rollover_visits_every_index_once():
    assert sorted(IntervalSampler(101, 7)) == list(range(101))


def test_interval_larger_than_length():
    with pytest.raises(AssertionError, match='Interval 4 must be smaller than or equal to length 3'):
        IntervalSampler(3, 4)


def test_is_a_sampler_usable_by_dataloader():
    sampler = IntervalSampler(6, 2)
    assert isinstance(sampler, gluon.data.Sampler)
    dataset = gluon.data.SimpleDataset([10, 11, 12, 13, 14, 15])
    loader = gluon.data.DataLoader(dataset, batch_size=3, sampler=sampler)
    assert [batch.asnumpy().tolist() for batch in loader] == [[10, 12, 14], [11, 13, 15]]
