"""``SymbolBlock``: a Gluon block around an existing Symbol graph.

It is how exported models come back (``SymbolBlock.imports('net-symbol.json', ['data'],
'net-0000.params')``) and how a part of a graph (``net(sym).get_internals()[...]``) becomes
a feature extractor. Every argument of the graph that is not an input becomes a Parameter
of the block (auxiliary states with ``grad_req='null'``), of unknown shape until the first
call infers it from the inputs.
"""
import numpy as np

from .. import symbol as _symbol
from ..ndarray import NDArray
from ._cached_graph import CachedGraph, flatten
from ..symbol.numpy import _Symbol, np_symbol
from ..util import is_np_array
from .block import HybridBlock
from .parameter import ParameterDict

__all__ = ['SymbolBlock']


def _common_prefix(names):
    """The longest string every name starts with."""
    if not names:
        return ''
    prefix = names[0]
    for name in names[1:]:
        i = 0
        while i < min(len(prefix), len(name)) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _param_dtypes(inputs, outputs):
    """``{variable name: numpy dtype}`` inferred from the inputs' dtypes (their ``__dtype__``
    attribute, float32 otherwise); float32 where inference cannot tell."""
    known = {sym.name: np.float32 if sym.attr('__dtype__') is None else _symbol_dtype(sym)
             for sym in inputs}
    arg_types, _, aux_types = outputs.infer_type(**known)
    names = outputs.list_arguments() + outputs.list_auxiliary_states()
    if arg_types is None:
        return {name: np.float32 for name in names}
    return dict(zip(names, list(arg_types) + list(aux_types)))


def _symbol_dtype(variable):
    """The dtype a variable declares with ``dtype=`` (its ``__dtype__`` type flag)."""
    from ..base import TORCH_OF_TYPE_FLAG, np_dtype
    return np_dtype(TORCH_OF_TYPE_FLAG[int(variable.attr('__dtype__'))])


_ROW_SPARSE_FLAG = '1'      # a variable's __storage_type__ attribute for stype='row_sparse'


class SymbolBlock(HybridBlock):
    """A HybridBlock computing ``outputs`` from the variables ``inputs``.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
    inputs : Symbol or list of Symbol
        Variables of ``outputs``' graph fed by the caller, in call order.
    params : ParameterDict, optional
        Parameters to use for the other variables (looked up by full name), e.g. the
        ``collect_params()`` of the block that built the graph; new ones are created for
        names it lacks.

    Calls always run the compiled graph; called on Symbols, the block returns a copy of
    its graph with the inputs replaced.
    """

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, _symbol.Symbol) and len(inputs) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        variables, self._in_format = flatten(inputs)
        for sym in variables:
            assert len(sym.get_internals()) == 1, \
                'Input symbols must be variable, but %s is an output of operators' % str(sym)
        flat_out, out_fmt = flatten(outputs)
        graph_out = _symbol.Group(flat_out)
        for node in graph_out.get_internals():
            # As MXNet: a SymbolBlock's parameters are dense.
            assert node.attr('__storage_type__') != _ROW_SPARSE_FLAG, \
                "SymbolBlock doesn't support Parameter '%s' because its storage type is " \
                "'row_sparse'." % node.name
        self._create_params(variables, graph_out)
        # NumPy semantics (set_np(), or mx.sym.np outputs): outputs are mx.np arrays, as in MXNet
        self._np_mode = is_np_array() or any(isinstance(o, _Symbol) for o in flat_out)
        self._symbol_graph = CachedGraph(self, variables, graph_out, out_fmt, np_mode=self._np_mode)
        self._clear_cached_graphs()
        prefix_len = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[prefix_len:]: param for key, param in self._params.items()}

    def _create_params(self, inputs, outputs):
        """A Parameter (shape inferred at the first call) for every non-input variable."""
        input_names = {sym.name for sym in inputs}
        dtypes = _param_dtypes(inputs, outputs)
        for name in outputs.list_arguments():
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True, dtype=dtypes[name])
        for name in outputs.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req='null', allow_deferred_init=True,
                                dtype=dtypes[name])

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from a ``-symbol.json`` file and, optionally, a ``.params`` file (as
        written by ``HybridBlock.export`` or ``mx.model.save_checkpoint``).

        Parameters
        ----------
        symbol_file : str
        input_names : str or list of str
            The variables fed by the caller (``'data'`` for exported blocks).
        param_file : str, optional
            Parameters to load; their saved dtypes are kept.
        ctx : Context or list of Context, optional
        allow_missing, ignore_extra : bool
            As in ``ParameterDict.load``.
        """
        sym = _symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        inputs = [_symbol.var(name) for name in input_names]
        block = SymbolBlock(sym, inputs)
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source='saved')
        return block

    def _clear_cached_graphs(self):
        super()._clear_cached_graphs()
        self._cached_graphs = {self._in_format: self._symbol_graph}  # the graph is the block
        self._cached_graph = self._symbol_graph

    def _trace(self, flat, fmt):
        raise ValueError('Invalid input format: the block takes inputs structured as %s, got %s'
                         % (self._in_format, fmt))

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            return self._call_cached_graph((x,) + args)
        flat, fmt = flatten((x,) + args)
        assert fmt == self._in_format, 'Invalid input format'
        graph = self._symbol_graph
        composed = graph.symbol(**{v.name: sym for v, sym in zip(graph.variables, flat)})
        outputs = [np_symbol(o) for o in composed] if self._np_mode else list(composed)
        return graph.regroup(outputs)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError
