"""DGL's graph operators on csr graphs: values checked against MXNet 1.9.1's outputs."""
import numpy as np
import pytest

import neomx as mx
from neomx import _rng_state
from neomx.base import MXNetError


def _complete_graph():
    """MXNet's docstring graph: 5 vertices, every vertex linked to every other, edge ids 1..20."""
    data = np.arange(1, 21, dtype=np.int64)
    indices = np.array([1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3], dtype=np.int64)
    indptr = np.array([0, 4, 8, 12, 16, 20], dtype=np.int64)
    return mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(5, 5))


def _graph4():
    return mx.nd.array([[1, 0, 0, 2], [3, 0, 4, 0], [0, 5, 0, 0], [0, 6, 7, 0]], dtype='int64').tostype('csr')


def test_edge_id():
    x = mx.nd.array([[1, 0, 0], [0, 2, 0], [0, 0, 3]]).tostype('csr')
    out = mx.nd.contrib.edge_id(x, mx.nd.array([0, 0, 1, 1, 2, 2]), mx.nd.array([0, 1, 1, 2, 0, 2]))
    assert out.stype == 'default' and out.dtype == np.float32
    assert out.asnumpy().tolist() == [1, -1, 2, -1, -1, 3]
    with pytest.raises(MXNetError, match='edge_id.*csr'):
        mx.nd.contrib.edge_id(x.tostype('default'), mx.nd.array([0]), mx.nd.array([0]))
    with pytest.raises(MXNetError, match='edge_id'):
        mx.nd.contrib.edge_id(x, mx.nd.array([0, 1]), mx.nd.array([0]))


def test_dgl_adjacency():
    x = mx.nd.array([[1, 0, 0], [0, 2, 0], [0, 0, 3]], dtype='int64').tostype('csr')
    adj = mx.nd.contrib.dgl_adjacency(x)
    assert adj.stype == 'csr' and adj.dtype == np.float32
    assert adj.asnumpy().tolist() == np.eye(3).tolist()
    with pytest.raises(MXNetError, match='int64'):
        mx.nd.contrib.dgl_adjacency(x.astype('float32'))


def test_dgl_subgraph():
    g = _graph4()
    sub, orig = mx.nd.contrib.dgl_subgraph(g, mx.nd.array([0, 1, 2], dtype='int64'), return_mapping=True)
    # new edge ids count from 0 in row order (an edge of id 0 is a stored entry)
    assert sub.indptr.asnumpy().tolist() == [0, 1, 3, 4]
    assert sub.indices.asnumpy().tolist() == [0, 0, 2, 1]
    assert sub.data.asnumpy().tolist() == [0, 1, 2, 3]
    assert orig.asnumpy().tolist() == [[1, 0, 0], [3, 0, 4], [0, 5, 0]]
    one, two = mx.nd.contrib.dgl_subgraph(g, mx.nd.array([0, 1, 2], dtype='int64'),
                                          mx.nd.array([1, 3], dtype='int64'), return_mapping=False)
    assert one.shape == (3, 3) and two.shape == (2, 2)
    # the edge 3 -> 1 only: new id 0, at row 1 (vertex 3), column 0 (vertex 1)
    assert two.indptr.asnumpy().tolist() == [0, 0, 1] and two.indices.asnumpy().tolist() == [0]
    with pytest.raises(MXNetError, match='sorted'):
        mx.nd.contrib.dgl_subgraph(g, mx.nd.array([2, 0], dtype='int64'), return_mapping=False)


def test_uniform_sample_stops_at_max_vertices():
    # as MXNet 1.9.1: five seeds fill max_num_vertices=5, so no neighbour is sampled
    ids, edges, layers = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
        _complete_graph(), mx.nd.array([0, 1, 2, 3, 4], dtype='int64'), num_args=2, num_hops=1,
        num_neighbor=2, max_num_vertices=5)
    assert ids.asnumpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert edges.stype == 'csr' and edges.shape == (5, 5) and edges.indices.shape == (0,)
    assert layers.asnumpy().tolist() == [0] * 5


@pytest.mark.parametrize('weighted', [False, True])
def test_neighbor_sample_and_compact(weighted):
    graph = _complete_graph()
    seed = mx.nd.array([1], dtype='int64')
    generators = _rng_state.capture()
    mx.random.seed(3)
    try:
        if weighted:
            prob = mx.nd.array([0.9, 0.8, 0.2, 0.4, 0.1])
            ids, edges, probs, layers = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample(
                graph, prob, seed, num_hops=1, num_neighbor=2, max_num_vertices=6)
        else:
            ids, edges, layers = mx.nd.contrib.dgl_csr_neighbor_uniform_sample(
                graph, seed, num_hops=1, num_neighbor=2, max_num_vertices=6)
    finally:
        _rng_state.restore(generators)      # the suite's random streams go on as before
    assert ids.shape == (7,) and edges.shape == (6, 5) and layers.shape == (6,)
    n = int(ids[-1].asscalar())
    assert n == 3                       # the seed and its two sampled neighbours
    vertices = ids.asnumpy()[:n]
    assert 1 in vertices and sorted(vertices) == vertices.tolist()
    lay = layers.asnumpy()[:n]
    assert lay.tolist() == [0 if v == 1 else 1 for v in vertices]
    dense = edges.asnumpy()
    row = dense[vertices.tolist().index(1)]
    # row of vertex 1: its two sampled out-edges, parent ids (vertex 1's edges are 5..8)
    assert (row > 0).sum() == 2 and set(row[row > 0]) <= {5, 6, 7, 8}
    assert sorted(np.nonzero(row)[0].tolist() + [1]) == vertices.tolist()
    if weighted:
        assert np.allclose(probs.asnumpy()[:n], np.array([0.9, 0.8, 0.2, 0.4, 0.1])[vertices])
    compact = mx.nd.contrib.dgl_graph_compact(edges, ids, graph_sizes=(n,), return_mapping=False)
    assert compact.shape == (n, n) and compact.dtype == np.int64
    assert compact.data.asnumpy().tolist() == [0, 1]
    assert sorted(compact.indices.asnumpy().tolist()) == [i for i, v in enumerate(vertices) if v != 1]


def test_symbol_shapes():
    s = mx.sym.contrib.dgl_csr_neighbor_uniform_sample(mx.sym.var('g'), mx.sym.var('v'), max_num_vertices=7)
    assert s.infer_shape(g=(4, 4), v=(3,))[1] == [(8,), (7, 4), (7,)]
    s = mx.sym.contrib.dgl_subgraph(mx.sym.var('g'), mx.sym.var('v'), return_mapping=True)
    assert s.infer_shape(g=(4, 4), v=(3,))[1] == [(3, 3), (3, 3)]
