"""What ``autograd.record()`` recorded, as MXNet operators, for :func:`neomx.autograd.get_symbol`.

torch's autograd graph holds torch functions, not MXNet operators, so the frontends tell
this module, only while recording and only for operations on arrays that require
gradients, which operator with which attributes made each output from which inputs. Each
output array carries its *entry* ``(node, output index)`` in its ``_rec`` slot, as each
MXNet array carries its autograd entry. An input without one gets a variable node the
first time a recorded operation reads it, named as MXNet names them: ``var<N>`` for
arrays with gradients (kept on their tensor, which every array of a parameter shares),
``null<N>`` for the others.

A node is a list ``[op, attrs, inputs, name]`` (cheaper to make than an object, and this
runs for every recorded operation):

* ``op``: the registry operator's name (``'_CachedOp'`` for a hybridized block's graph),
  None for a variable;
* ``attrs``: the attributes as the caller gave them (values, not yet strings); for a
  graph ``{'__graph__': (symbol, input_names, inline_limit)}``;
* ``inputs``: the entries the operation read, in input order;
* ``name``: ``var<N>``/``null<N>`` for variables, ``node_<N>`` once a Symbol was built.

The nodes hold their input *entries*, never arrays, so the record keeps no array alive.
"""
import itertools

__all__ = ['OP', 'ATTRS', 'INPUTS', 'NAME', 'TENSOR_ATTR', 'note', 'note_new', 'note_graph', 'entry_of', 'name_of', 'new_node_name']

OP, ATTRS, INPUTS, NAME = range(4)
TENSOR_ATTR = '_neomx_recorded_entry'       # a variable's entry on a tensor with gradients
# One counter for variables, one for operations, as MXNet's (process-wide; next() is atomic)
_VARIABLE_IDS = itertools.count()
_NODE_IDS = itertools.count()


def _tensor_of(array):
    """``array``'s tensor, without densifying a sparse array that has no dense form (a csr
    batch): its sparse tensor then, which never requires gradients."""
    either = getattr(array, '_either', None)
    return array._t if either is None else either()


def _input_entry(array):
    """The entry of input ``array``, made a variable's where it has none."""
    tensor = _tensor_of(array)
    entry = getattr(tensor, TENSOR_ATTR, None)
    if entry is None:
        if tensor.requires_grad and tensor.is_leaf:
            entry = ([None, None, (), 'var%d' % next(_VARIABLE_IDS)], 0)
            setattr(tensor, TENSOR_ATTR, entry)
        else:
            entry = ([None, None, (), 'null%d' % next(_VARIABLE_IDS)], 0)
    array._rec = entry
    return entry


def entry_of(array):
    """The entry of ``array``: its recorded operation's, or a variable's for an array with
    gradients (marked now); None for other arrays no recorded operation made."""
    tensor = _tensor_of(array)
    entry = getattr(array, '_rec', None) or getattr(tensor, TENSOR_ATTR, None)
    if entry is None and tensor.requires_grad and tensor.is_leaf:
        entry = _input_entry(array)
    return entry


def note(op, attrs, arrays, result):
    """Record that operator ``op`` with ``attrs`` made ``result`` (an array, or a list or
    tuple of them by output index) from ``arrays`` (absent optional inputs None, left out),
    where ``result`` may hand an input back (``out=``, a copy to the same device): such an
    input keeps its own entry. Results the operation made anew take :func:`note_new`."""
    if type(result) is list or type(result) is tuple:
        if not any(_among(r, arrays) for r in result):
            note_new(op, attrs, arrays, result)
            return
        node = [op, attrs, _entries(arrays), None]
        for i, r in enumerate(result):
            if not _among(r, arrays):
                r._rec = (node, i)
    elif not _among(result, arrays):
        note_new(op, attrs, arrays, result)


def note_new(op, attrs, arrays, result):
    """:func:`note` for a ``result`` the operation made anew (none of ``arrays``), as
    nearly every operation's is.

    Called by the frontends while recording, after the operation ran, for every operation
    on arrays that require gradients: this is the cost ``get_symbol`` adds to training, so
    the common cases (one to three inputs that have entries, one result) take the shortest
    path."""
    try:
        n = len(arrays)
        if n == 1:
            inputs = (arrays[0]._rec or _input_entry(arrays[0]),)
        elif n == 2:
            inputs = (arrays[0]._rec or _input_entry(arrays[0]), arrays[1]._rec or _input_entry(arrays[1]))
        elif n == 3:        # FullyConnected, Convolution: data, weight, bias
            inputs = (arrays[0]._rec or _input_entry(arrays[0]), arrays[1]._rec or _input_entry(arrays[1]),
                      arrays[2]._rec or _input_entry(arrays[2]))
        else:
            inputs = _entries(arrays)
    except AttributeError:      # an array never recorded (its _rec slot unset), or None
        inputs = _entries(arrays)
    if type(result) is list or type(result) is tuple:
        node = [op, attrs, inputs, None]
        for i, r in enumerate(result):
            r._rec = (node, i)
    else:
        result._rec = ([op, attrs, inputs, None], 0)


def note_graph(attrs, flat_args, positions, params, results):
    """:func:`note_new` of a hybridized block's run (a ``_CachedOp`` with ``attrs``): its
    data ``flat_args[i] for i in positions``, then its ``params``' arrays, made the list
    ``results``. (Loops, no comprehension or ``attrgetter``, which cost more: this runs on every
    hybridized training step.)"""
    try:
        inputs = []
        for i in positions:
            a = flat_args[i]
            inputs.append(a._rec or _input_entry(a))
        for a in params:
            inputs.append(a._rec or _input_entry(a))
        inputs = tuple(inputs)
    except AttributeError:      # an array never recorded (its _rec slot unset)
        inputs = _entries([flat_args[i] for i in positions] + params)
    node = ['_CachedOp', attrs, inputs, None]
    for i, r in enumerate(results):
        r._rec = (node, i)


def _entries(arrays):
    return tuple([getattr(a, '_rec', None) or _input_entry(a) for a in arrays if a is not None])


def _among(array, arrays):
    """Whether ``array`` is one of the inputs (an operation handing its input back, as
    ``as_in_context`` to the same device does, leaves that input's own entry)."""
    for a in arrays:
        if a is array:
            return True
    return False


def new_node_name():
    """The next operation node's name, ``node_<N>``."""
    return 'node_%d' % next(_NODE_IDS)


def name_of(node):
    """``node``'s name, given now (``node_<N>``) to an operation first named."""
    if node[NAME] is None:
        node[NAME] = new_node_name()
    return node[NAME]
