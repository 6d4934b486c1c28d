"""What the lower layers use from the layers above them, registered by those layers when imported.

The operator registry (``neomx.operator``) and autograd sit below ``neomx.ndarray`` and
``neomx.symbol`` and never import them. A few of their functions still need them when they
run: custom operators and autograd's ``Function`` hand their user code NDArrays, and
``autograd.grad`` returns NDArrays; control-flow operators run Symbol subgraphs, and
``PythonOp.get_symbol`` builds a ``Custom`` Symbol. Each package registers what it offers
here as it is imported (``import neomx`` imports both, so everything is registered before
any of them runs).
"""
from .base import MXNetError

# name -> the package that registers it
_OFFERED_BY = {
    'array_from_tensor': 'neomx.ndarray',     # (torch.Tensor, Context) -> NDArray, sharing memory
    'np_array_from_tensor': 'neomx.numpy',    # (torch.Tensor, Context) -> mx.np.ndarray, sharing memory
    # (torch.Tensor, Context) -> NDArray of the tensor's storage (csr, row_sparse or dense), not copied
    'sparse_array_from_tensor': 'neomx.ndarray',
    'compiled_graph': 'neomx.symbol',         # (Symbol, Context) -> callable on input tensors
    'custom_symbol': 'neomx.symbol',          # mx.sym.Custom
    'symbol_from_json': 'neomx.symbol',       # mx.sym.load_json, for _CachedOp's subgraph
    'np_symbol_call': 'neomx.symbol',         # (op, arrays, attrs, out) -> mx.sym.np._Symbol node
    'np_records_creation': 'neomx.symbol',    # () -> whether array-less operators record nodes
    'recorded_symbol': 'neomx.symbol',        # (torch.Tensor) -> Symbol of its recorded computation
    'profile_operator_names': 'neomx.ndarray',  # (bool) -> None: MXNet's names on the profiler's timeline
    # gluon.contrib.data.text's datasets index their tokens with mx.contrib.text (which uses gluon)
    'text_vocabulary': 'neomx.contrib',       # mx.contrib.text.vocab.Vocabulary
    'count_tokens_from_str': 'neomx.contrib',  # mx.contrib.text.utils.count_tokens_from_str
}
_REGISTERED = {}


def register(name, value):
    """Offer ``value`` under ``name`` (one of the names above) to the lower layers."""
    if name not in _OFFERED_BY:
        raise KeyError('the lower layers use no %r from the layers above; known: %s'
                       % (name, ', '.join(_OFFERED_BY)))
    _REGISTERED[name] = value


def get(name):
    """What was registered under ``name``; MXNetError naming the package that offers it when
    that package was not imported."""
    try:
        return _REGISTERED[name]
    except KeyError:
        raise MXNetError('%s is needed from %s, which is not imported yet (import neomx)'
                         % (name, _OFFERED_BY[name])) from None
