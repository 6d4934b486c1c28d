"""DGL's graph operators (``mx.nd.contrib.dgl_*``, ``edge_id``): graphs stored as csr matrices.

A graph of ``N`` vertices is an ``(N, N)`` csr matrix whose entry ``(u, v)`` is the id of the
edge from ``u`` to ``v`` (an int64 edge id: ``0`` is a valid one, so an edge is a *stored*
entry, whatever its value). As in MXNet 1.9.1 every operator here needs its graph in csr
storage: a dense graph is refused, naming the operator. On ``device='meta'`` tensors (a
Symbol's shape inference) the dense implementations give MXNet's output shapes.

The neighbour samplers draw from torch's generator (``mx.random.seed`` makes them
reproducible); MXNet seeds its own from the clock, so only the distributions agree. Entries
MXNet leaves unwritten (vertex slots past the sampled count) are zeros here.

Example
-------
>>> import neomx as mx
>>> g = mx.nd.array([[1, 0, 0, 2], [3, 0, 4, 0], [0, 5, 0, 0], [0, 6, 7, 0]],
...                 dtype='int64').tostype('csr')
>>> mx.nd.contrib.edge_id(g, mx.nd.array([0, 0, 3], dtype='int64'),
...                       mx.nd.array([3, 1, 2], dtype='int64')).asnumpy().tolist()
[2, -1, 7]
>>> sub, orig = mx.nd.contrib.dgl_subgraph(g, mx.nd.array([0, 1, 2], dtype='int64'),
...                                        return_mapping=True)
>>> sub.indices.asnumpy().tolist(), sub.data.asnumpy().tolist(), orig.data.asnumpy().tolist()
([0, 0, 2, 1], [0, 1, 2, 3], [1, 3, 4, 5])
"""
import logging

import torch

from ..base import MXNetError
from . import storage
from .registry import BOOL, INT, SHAPE, check, register

__all__ = ['edge_id', 'dgl_adjacency', 'dgl_subgraph', 'dgl_graph_compact', 'csr_neighbor_uniform_sample',
           'csr_neighbor_non_uniform_sample']

_LOG = logging.getLogger('neomx.operator')
_ID = torch.int64
_META = 'meta'


def _is_meta(t):
    return t.device.type == _META


def _meta(shape, dtype):
    return torch.empty(shape, dtype=dtype, device=_META)


def _needs_csr(op):
    raise MXNetError('%s: only works for csr matrices: the graph (input 0) must be in csr storage' % op)


def _csr_only(stypes, attrs):
    """The storage rule of these operators: a csr graph, every other input dense."""
    if stypes[0] == storage.CSR and all(s in (None, storage.DEFAULT) for s in stypes[1:]):
        return storage.CSR
    return None


def _attach(impl, sparse_impl):
    impl.spec.storage = (_csr_only, sparse_impl)


def _ids(t):
    return t.reshape(-1).to(_ID)


def _csr_from_rows(row_cols, row_vals, shape, dtype, device):
    """A csr tensor whose row ``i`` holds columns ``row_cols[i]`` with values ``row_vals[i]``
    (lists of int64 tensors; rows past the lists are empty)."""
    counts = torch.tensor([len(c) for c in row_cols] + [0] * (shape[0] - len(row_cols)), dtype=_ID)
    indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)]).to(device)
    cols = torch.cat(row_cols) if row_cols else torch.zeros(0, dtype=_ID)
    vals = torch.cat(row_vals) if row_vals else torch.zeros(0, dtype=_ID)
    return storage.make_csr(indptr, cols.to(device), vals.to(dtype).to(device), shape)


def _empty_csr(shape, dtype, device):
    return storage.make_csr(torch.zeros(shape[0] + 1, dtype=_ID, device=device), torch.zeros(0, dtype=_ID, device=device),
                            torch.zeros(0, dtype=dtype, device=device), shape)


# ------------------------------------------------------------------ edge_id, dgl_adjacency
@register('_contrib_edge_id', inputs=('data', 'u', 'v'))
def edge_id(data, u, v):
    """The id of each edge ``u[i] -> v[i]`` of a graph stored in a csr matrix, -1 where there is none.

    ``output[i] = data[u[i], v[i]]`` where that entry is stored, else -1; ``u`` and ``v`` are
    1-D arrays of one length. The output has the graph's dtype and ``u``'s shape.
    """
    check(u.dim() == 1 and v.dim() == 1 and u.shape[0] == v.shape[0], 'edge_id',
          'u and v must be 1-D arrays of one length, got shapes %s and %s', u.shape, v.shape)
    if _is_meta(data):
        return _meta(u.shape, data.dtype)
    return _needs_csr('edge_id')


def _edge_id_csr(data, u, v):
    edge_id(data.values().new_empty((0,), device=_META), u.to(_META), v.to(_META))     # the shape checks
    indptr, cols, vals = storage.csr_parts(data)
    n_rows, n_cols = data.shape
    rows, targets = _ids(u), _ids(v)
    check(bool(((rows >= 0) & (rows < n_rows)).all()), 'edge_id', 'u holds a vertex outside [0, %d)', n_rows)
    out = torch.full(rows.shape, -1, dtype=vals.dtype, device=vals.device)
    if len(cols) == 0:
        return out
    # each entry's key row * n_cols + col is sorted (csr rows in order, columns ascending)
    keys = storage.csr_rows(indptr) * n_cols + cols
    wanted = rows * n_cols + targets
    pos = torch.searchsorted(keys, wanted).clamp(max=len(keys) - 1)
    found = keys[pos] == wanted
    out[found] = vals[pos[found]]
    return out


_attach(edge_id, _edge_id_csr)


def _edge_id_rule(stypes, attrs):
    return storage.DEFAULT if _csr_only(stypes, attrs) else None


edge_id.spec.storage = (_edge_id_rule, _edge_id_csr)


@register('_contrib_dgl_adjacency', inputs=('data',))
def dgl_adjacency(data):
    """The adjacency matrix of a graph whose csr values are edge ids: its stored entries become
    ones, in float32 (csr in, csr out; the graph must be int64)."""
    if _is_meta(data):
        return _meta(data.shape, torch.float32)
    return _needs_csr('dgl_adjacency')


def _dgl_adjacency_csr(data):
    check(data.dtype == _ID, 'dgl_adjacency', 'the graph must hold int64 edge ids, got %s', data.dtype)
    indptr, cols, vals = storage.csr_parts(data)
    return storage.make_csr(indptr.clone(), cols.clone(), torch.ones(len(vals), dtype=torch.float32,
                                                                      device=vals.device), data.shape)


_attach(dgl_adjacency, _dgl_adjacency_csr)


# ------------------------------------------------------------------ induced subgraphs
def _subgraph_outputs(attrs):
    count = attrs['num_args'] - 1
    return count * 2 if attrs['return_mapping'] else count


@register('_contrib_dgl_subgraph', variadic='num_args', attrs=[('num_args', INT), ('return_mapping', BOOL)],
          num_outputs=_subgraph_outputs)
def dgl_subgraph(*arrays, num_args, return_mapping):
    """The subgraphs induced by sets of vertices of a graph (``graph, varray0, varray1...``).

    Each vertex set is a sorted 1-D int64 array; its subgraph is a csr matrix over those
    vertices (renumbered ``0..len-1`` in the set's order) whose values are new edge ids
    ``0, 1, ...`` in row order. With ``return_mapping`` a second csr matrix per set, of the
    same structure, holds the parent graph's edge ids. Outputs: the subgraphs, then the
    mappings.
    """
    check(num_args >= 2 and len(arrays) == num_args, 'dgl_subgraph',
          'expects a graph and at least one vertex array (num_args=%d), got %d inputs', num_args, len(arrays))
    graph, varrays = arrays[0], arrays[1:]
    check(graph.dim() == 2, 'dgl_subgraph', 'the graph must be 2-D, got shape %s', graph.shape)
    for i, vs in enumerate(varrays):
        check(vs.dim() == 1, 'dgl_subgraph', 'vertex array %d must be 1-D, got shape %s', i, vs.shape)
    if not _is_meta(graph):
        return _needs_csr('dgl_subgraph')
    shapes = [(len(vs), len(vs)) for vs in varrays]
    outs = tuple(_meta(s, graph.dtype) for s in shapes * (2 if return_mapping else 1))
    return outs if len(outs) > 1 else outs[0]


def _dgl_subgraph_csr(graph, *varrays, num_args, return_mapping):
    dgl_subgraph(torch.empty(graph.shape, dtype=graph.dtype, device=_META), *(v.to(_META) for v in varrays),
                 num_args=num_args, return_mapping=return_mapping)
    indptr, cols, vals = storage.csr_parts(graph)
    n_vertices = graph.shape[0]
    subgraphs, mappings = [], []
    for i, vs in enumerate(varrays):
        check(vs.dtype == _ID, 'dgl_subgraph', 'vertex array %d must be int64, got %s', i, vs.dtype)
        vids = vs.to(_ID)
        check(bool((vids[1:] >= vids[:-1]).all()), 'dgl_subgraph', 'the input vertex list has to be sorted')
        if len(vids):
            top = int(vids.max())
            check(top < n_vertices, 'dgl_subgraph', "vertex id %d isn't in a graph of %d vertices", top, n_vertices)
        # new id of each parent vertex (-1 outside the set); a repeated vertex keeps its last position
        new_id = torch.full((max(n_vertices, graph.shape[1]),), -1, dtype=_ID, device=cols.device)
        new_id[vids] = torch.arange(len(vids), dtype=_ID, device=cols.device)
        starts, counts = indptr[vids], indptr[vids + 1] - indptr[vids]
        ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
        rows = torch.repeat_interleave(torch.arange(len(vids), device=cols.device), counts)
        src = starts[rows] + torch.arange(int(ptr[-1]), device=cols.device) - ptr[rows]
        mapped = new_id[cols[src]]
        keep = mapped >= 0
        rows, mapped, old_eids = rows[keep], mapped[keep], vals[src][keep]
        kept = torch.bincount(rows, minlength=len(vids))
        sub_ptr = torch.cat([kept.new_zeros(1), torch.cumsum(kept, 0)])
        shape = (len(vids), len(vids))
        subgraphs.append(storage.make_csr(sub_ptr, mapped, torch.arange(len(mapped), device=cols.device)
                                          .to(vals.dtype), shape))
        if return_mapping:
            mappings.append(storage.make_csr(sub_ptr.clone(), mapped.clone(), old_eids, shape))
    outs = tuple(subgraphs + mappings)
    return outs if len(outs) > 1 else outs[0]


_attach(dgl_subgraph, _dgl_subgraph_csr)


# ------------------------------------------------------------------ compaction
def _compact_outputs(attrs):
    count = attrs['num_args'] // 2
    return count * 2 if attrs['return_mapping'] else count


@register('_contrib_dgl_graph_compact', variadic='num_args',
          attrs=[('num_args', INT), ('return_mapping', BOOL), ('graph_sizes', SHAPE)], num_outputs=_compact_outputs)
def dgl_graph_compact(*graph_data, num_args, return_mapping, graph_sizes):
    """Compact the csr subgraphs that the neighbour samplers give (``graph0.., varray0..``).

    A sampled subgraph has ``max_num_vertices`` rows, of which the first ``graph_sizes[i]``
    hold its vertices, and columns numbered by the parent graph. Compaction keeps those
    rows and renumbers the columns by the vertices' positions in ``varray i`` (the sampler's
    first output, whose last element is the vertex count): an ``(n, n)`` int64 csr matrix whose
    values are new edge ids ``0, 1, ...``. As in MXNet 1.9.1, ``return_mapping`` adds one empty
    ``(n, n)`` csr matrix per graph.
    """
    count = num_args // 2
    check(len(graph_data) == num_args and num_args == 2 * count and len(graph_sizes) >= count,
          'dgl_graph_compact', 'expects graphs and vertex arrays in pairs (num_args=%d, graph_sizes=%s), '
          'got %d inputs', num_args, graph_sizes, len(graph_data))
    for i in range(count):
        g, vs, size = graph_data[i], graph_data[count + i], graph_sizes[i]
        check(g.dim() == 2 and g.shape[0] >= size and g.shape[1] >= size and vs.dim() == 1 and vs.shape[0] >= size,
              'dgl_graph_compact', 'graph %d of shape %s with vertex array of shape %s cannot hold %d vertices',
              i, g.shape, vs.shape, size)
    if not _is_meta(graph_data[0]):
        return _needs_csr('dgl_graph_compact')
    outs = tuple(_meta((graph_sizes[i], graph_sizes[i]), _ID) for i in range(count)) * (2 if return_mapping else 1)
    return outs if len(outs) > 1 else outs[0]


def _dgl_graph_compact_csr(*graph_data, num_args, return_mapping, graph_sizes):
    dgl_graph_compact(*(torch.empty(t.shape, dtype=t.dtype, device=_META) for t in graph_data), num_args=num_args,
                      return_mapping=return_mapping, graph_sizes=graph_sizes)
    for i, t in enumerate(graph_data):
        check(t.dtype == _ID, 'dgl_graph_compact', 'input %d must be int64, got %s', i, t.dtype)
    count = num_args // 2
    compacted, mappings = [], []
    for i in range(count):
        g, vids, size = graph_data[i], graph_data[count + i].to(_ID), graph_sizes[i]
        indptr, cols, _ = storage.csr_parts(g)
        check(vids.shape[0] == indptr.shape[0], 'dgl_graph_compact',
              'vertex array %d has %d elements, expected the graph\'s rows + 1 = %d', i, vids.shape[0], indptr.shape[0])
        check(int(vids[-1]) == size, 'dgl_graph_compact',
              'vertex array %d counts %d vertices (its last element), graph_sizes says %d', i, int(vids[-1]), size)
        known = vids[:size]
        check(bool((known != -1).all()), 'dgl_graph_compact', 'vertex array %d holds -1 among its vertices', i)
        # each parent vertex's position among the subgraph's vertices (the first, if repeated)
        order = torch.argsort(known, stable=True)
        ranked = known[order]
        pos = torch.searchsorted(ranked, cols).clamp(max=max(len(ranked) - 1, 0))
        check(len(cols) == 0 or bool((ranked[pos] == cols).all()), 'dgl_graph_compact',
              'graph %d has an edge to a vertex missing from its vertex array', i)
        new_cols = order[pos] if len(cols) else cols.clone()
        shape = (size, size)
        compacted.append(storage.make_csr(indptr[:size + 1].clone(), new_cols,
                                          torch.arange(len(cols), dtype=_ID, device=cols.device), shape))
        if return_mapping:
            mappings.append(_empty_csr(shape, _ID, cols.device))
    outs = tuple(compacted + mappings)
    return outs if len(outs) > 1 else outs[0]


_attach(dgl_graph_compact, _dgl_graph_compact_csr)


# ------------------------------------------------------------------ neighbour sampling
_SAMPLE_ATTRS = [('num_args', INT), ('num_hops', INT, 1), ('num_neighbor', INT, 2), ('max_num_vertices', INT, 100)]


def _pick_uniform(count, num_neighbor, weights):
    """Sorted positions of ``num_neighbor`` of a row's ``count`` entries, uniformly without replacement."""
    return torch.sort(torch.randperm(count)[:num_neighbor]).values


def _pick_weighted(count, num_neighbor, weights):
    """Positions of ``num_neighbor`` entries drawn without replacement with probability
    proportional to ``weights`` (entries of weight 0 only once the others are drawn)."""
    w = weights.to(torch.float64).clamp(min=0)
    w = torch.where(w > 0, w, torch.full_like(w, 1e-300))
    return torch.multinomial(w, num_neighbor, replacement=False)


def _sample_subgraph(op, graph, seeds, prob, num_hops, num_neighbor, max_num_vertices, pick):
    """One sampled subgraph, breadth first from ``seeds`` as MXNet's ``SampleSubgraph``: every
    vertex short of ``num_hops`` from a seed gets up to ``num_neighbor`` of its out-neighbours
    sampled, until ``max_num_vertices`` vertices are reached.

    Returns (vertex ids sorted, each one's layer, the subgraph's rows as (columns, edge ids)
    per vertex)."""
    indptr, cols, vals = storage.csr_parts(graph)
    indptr, cols, vals = indptr.cpu(), cols.cpu(), vals.cpu().to(_ID)
    seed_ids = seeds.cpu().to(_ID).tolist()
    check(max_num_vertices >= len(seed_ids), op, 'max_num_vertices (%d) must be at least the number of seeds (%d)',
          max_num_vertices, len(seed_ids))
    layer_of, queue = {}, []
    for s in seed_ids:
        if s not in layer_of:
            layer_of[s] = 0
            queue.append(s)
    sampled = {}
    head = 0
    while head < len(queue) and len(layer_of) < max_num_vertices:
        vertex = queue[head]
        head += 1
        level = layer_of[vertex]
        if level >= num_hops:
            continue
        start, end = int(indptr[vertex]), int(indptr[vertex + 1])
        row_cols, row_vals = cols[start:end], vals[start:end]
        if end - start > num_neighbor:
            picked = pick(end - start, num_neighbor, None if prob is None else prob[row_cols])
            row_cols, row_vals = row_cols[picked], row_vals[picked]
            if pick is _pick_weighted:     # MXNet sorts the two lists apart
                row_cols, row_vals = torch.sort(row_cols).values, torch.sort(row_vals).values
        sampled[vertex] = (row_cols, row_vals)
        for neighbour in row_cols.tolist():
            if len(layer_of) >= max_num_vertices:
                break
            if neighbour not in layer_of:
                layer_of[neighbour] = level + 1
                queue.append(neighbour)
    if any(layer_of[v] < num_hops for v in queue[head:]):
        _LOG.warning('The sampling is truncated because we have reached the max number of vertices\n'
                     'Please use a smaller number of seeds or a small neighborhood')
    vertices = sorted(layer_of)
    empty = torch.zeros(0, dtype=_ID)
    rows = [sampled.get(v, (empty, empty)) for v in vertices]
    return vertices, [layer_of[v] for v in vertices], rows


def _sample_meta(graph, prob, seeds, num_hops, num_neighbor, max_num_vertices):
    outs = [_meta((max_num_vertices + 1,), s.dtype) for s in seeds]
    outs += [_meta((max_num_vertices, graph.shape[1]), graph.dtype) for _ in seeds]
    if prob is not None:
        outs += [_meta((max_num_vertices,), prob.dtype) for _ in seeds]
    outs += [_meta((max_num_vertices,), s.dtype) for s in seeds]
    return tuple(outs)


def _check_sample_inputs(op, graph, prob, seeds):
    check(graph.dim() == 2 and graph.shape[0] == graph.shape[1], op,
          'the graph must be a square 2-D csr matrix, got shape %s', graph.shape)
    check(prob is None or prob.dim() == 1, op, 'the probability must be 1-D, got shape %s',
          None if prob is None else prob.shape)
    check(len(seeds) >= 1, op, 'expects at least one seed array')
    for i, s in enumerate(seeds):
        check(s.dim() == 1, op, 'seed array %d must be 1-D, got shape %s', i, s.shape)


def _sample(op, graph, prob, seeds, num_hops, num_neighbor, max_num_vertices):
    pick = _pick_uniform if prob is None else _pick_weighted
    prob_cpu = None if prob is None else prob.detach().cpu()
    ids, graphs, probs, layers = [], [], [], []
    device = graph.device
    for s in seeds:
        vertices, layer, rows = _sample_subgraph(op, graph, s, prob_cpu, num_hops, num_neighbor,
                                                 max_num_vertices, pick)
        n = len(vertices)
        # MXNet leaves the slots past the count unwritten: zeros here; the last element is the count
        vid = torch.zeros(max_num_vertices + 1, dtype=_ID)
        vid[:n] = torch.tensor(vertices, dtype=_ID)
        vid[max_num_vertices] = n
        ids.append(vid.to(s.dtype).to(device))
        lay = torch.zeros(max_num_vertices, dtype=_ID)
        lay[:n] = torch.tensor(layer, dtype=_ID)
        layers.append(lay.to(s.dtype).to(device))
        graphs.append(_csr_from_rows([r[0] for r in rows], [r[1] for r in rows], (max_num_vertices, graph.shape[1]),
                                     graph.dtype, device))
        if prob is not None:
            p = torch.zeros(max_num_vertices, dtype=prob.dtype)
            p[:n] = prob_cpu[vid[:n]]
            probs.append(p.to(device))
    outs = tuple(ids + graphs + probs + layers)
    return outs if len(outs) > 1 else outs[0]


@register('_contrib_dgl_csr_neighbor_uniform_sample', variadic='num_args', attrs=_SAMPLE_ATTRS,
          num_outputs=lambda a: 3 * (a['num_args'] - 1))
def csr_neighbor_uniform_sample(*arrays, num_args, num_hops, num_neighbor, max_num_vertices):
    """Sample subgraphs of a csr graph around seed vertices, neighbours drawn uniformly.

    Inputs: the ``(N, N)`` csr graph (values: int64 edge ids), then one 1-D int64 seed array
    per subgraph. For each seed array, breadth first up to ``num_hops`` hops, each vertex
    reached keeps up to ``num_neighbor`` of its out-edges (drawn uniformly without
    replacement), until ``max_num_vertices`` vertices are in. Outputs, one of each per seed
    array, in three groups: the sampled vertex ids sorted (``max_num_vertices + 1`` long; the
    last element is the number sampled), the sampled edges as a ``(max_num_vertices, N)`` csr
    matrix (row ``i``: the ``i``-th vertex's sampled out-edges, columns the parent graph's
    vertex ids, values its edge ids), and each vertex's hop count from the seeds.
    """
    graph, seeds = arrays[0], arrays[1:]
    _check_sample_inputs('dgl_csr_neighbor_uniform_sample', graph, None, seeds)
    if _is_meta(graph):
        return _sample_meta(graph, None, seeds, num_hops, num_neighbor, max_num_vertices)
    return _needs_csr('dgl_csr_neighbor_uniform_sample')


def _uniform_sample_csr(graph, *seeds, num_args, num_hops, num_neighbor, max_num_vertices):
    _check_sample_inputs('dgl_csr_neighbor_uniform_sample', graph, None, seeds)
    return _sample('dgl_csr_neighbor_uniform_sample', graph, None, seeds, num_hops, num_neighbor, max_num_vertices)


_attach(csr_neighbor_uniform_sample, _uniform_sample_csr)


@register('_contrib_dgl_csr_neighbor_non_uniform_sample', variadic='num_args', attrs=_SAMPLE_ATTRS,
          num_outputs=lambda a: 4 * (a['num_args'] - 2))
def csr_neighbor_non_uniform_sample(*arrays, num_args, num_hops, num_neighbor, max_num_vertices):
    """Sample subgraphs of a csr graph around seed vertices, neighbours drawn by a probability.

    As ``dgl_csr_neighbor_uniform_sample``, with a second input: a float32 vector giving each
    vertex's weight; a vertex's out-neighbours are drawn without replacement with probability
    proportional to their weights (as in MXNet, a sampled row's columns and edge ids are each
    sorted). A third output group gives each sampled vertex's weight; the groups are: vertex
    ids, edges (csr), weights, hop counts.
    """
    graph, prob, seeds = arrays[0], arrays[1], arrays[2:]
    _check_sample_inputs('dgl_csr_neighbor_non_uniform_sample', graph, prob, seeds)
    if _is_meta(graph):
        return _sample_meta(graph, prob, seeds, num_hops, num_neighbor, max_num_vertices)
    return _needs_csr('dgl_csr_neighbor_non_uniform_sample')


def _non_uniform_sample_csr(graph, prob, *seeds, num_args, num_hops, num_neighbor, max_num_vertices):
    _check_sample_inputs('dgl_csr_neighbor_non_uniform_sample', graph, prob, seeds)
    return _sample('dgl_csr_neighbor_non_uniform_sample', graph, prob, seeds, num_hops, num_neighbor,
                   max_num_vertices)


_attach(csr_neighbor_non_uniform_sample, _non_uniform_sample_csr)
