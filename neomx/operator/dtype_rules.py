"""How an operator's input and output dtypes relate: MXNet's type inference, declared.

Most MXNet operators have one dtype for all their inputs and outputs; ``infer_type`` fills
unknown ones from known ones and rejects a mismatch (``FullyConnected`` with float64 data
and a float32 weight). Operators that take indices, labels, lengths or conditions, keep
float32 master weights, or compute statistics in float32 for float16 data, say which of
their inputs follow other rules with a :class:`DTypeRule` (``register(..., dtypes=...)``).

Input roles:

* *tied* (the default): one dtype, the operator's type, shared by all tied inputs; a
  mismatch is an error.
* ``soft``: takes the operator's type when unknown, but may have another (SequenceMask's
  ``sequence_length``).
* ``free``: independent of the others, never inferred (``take``'s ``indices``).
* ``fixed``: always the given dtype (``weight32`` of the mixed-precision updates is float32).
* ``half_float32``: float32 when the operator's type is float16 or bfloat16, the operator's
  type otherwise (BatchNorm's ``gamma``, ``beta`` and moving statistics).
"""
import torch

from ..base import MXNetError, dtype_name, torch_dtype

__all__ = ['DTypeRule', 'DTypeMismatch', 'SAME_DTYPE']

_HALF = (torch.float16, torch.bfloat16)


def _by_attrs(value, attrs):
    """``value``, or ``value(attrs)`` for roles that depend on the attributes (variadic ops)."""
    return value(attrs) if callable(value) else value


class DTypeRule:
    """The dtype relations of one operator (see the module documentation).

    Parameters
    ----------
    soft, free, half_float32 : tuple of str, or callable(attrs) -> tuple of str
        Input names in those roles; the other inputs are tied.
    fixed : dict of str -> dtype name, or callable(attrs) -> dict
        Inputs with a dtype of their own.
    output : dtype name, or callable(input dtypes (None: unknown), attrs) -> dtype, optional
        Output 0's dtype when it is not the operator's type (``multi_sum_sq`` gives float32).
        An operator's ``dtype`` attribute, when given, comes before a dtype name, a
        callable (which sees the attributes) before both.
    later_outputs : callable(input dtypes (None: unknown), attrs) -> dtype or None, optional
        The dtype of the outputs after the first, where their shapes are not needed to
        know it (``_histogram``'s bin edges have the data's dtype); without it those
        dtypes come from running the operator once the shapes are known.
    """

    def __init__(self, soft=(), free=(), fixed=None, half_float32=(), output=None, later_outputs=None):
        self.soft, self.free, self.half_float32 = soft, free, half_float32
        self.fixed = fixed or {}
        self.output = output
        self.later_outputs = later_outputs

    def solve(self, names, attrs, known, typed_inputs=(), attr_dtype=None, backward=True):
        """Input and output dtypes implied by the known ones.

        Parameters
        ----------
        names : sequence of str
            The operator's input names.
        attrs : dict
            Its parsed attributes.
        known : list of torch.dtype or None
            The inputs' known dtypes (None: unknown), then output 0's.
        typed_inputs : tuple of str
            Inputs whose dtype is ``attr_dtype`` (Embedding's ``weight``).
        attr_dtype : torch.dtype, optional
            The operator's ``dtype`` attribute, when given.
        backward : bool
            Whether a known output types the inputs (not for operators with a ``dtype``
            attribute, whose output may differ from their inputs).

        Returns
        -------
        list of torch.dtype or None
            Every input's dtype and then output 0's, None where still unknown.

        Raises
        ------
        DTypeMismatch
            A known input contradicts the rule.
        """
        inputs, out = list(known[:-1]), known[-1]
        free = set(_by_attrs(self.free, attrs))
        soft = set(_by_attrs(self.soft, attrs))
        half = set(_by_attrs(self.half_float32, attrs))
        fixed = {n: torch_dtype(d) for n, d in _by_attrs(self.fixed, attrs).items()}
        if attr_dtype is not None:
            fixed.update((n, attr_dtype) for n in typed_inputs)
        tied = [i for i, n in enumerate(names) if n not in free | soft | half and n not in fixed]
        source = next((i for i in tied if inputs[i] is not None), None)
        own_type = None if source is None else inputs[source]
        if own_type is None and backward and self.output is None and tied:
            own_type = out      # MXNet infers backwards too: an output's dtype types the inputs
        expected = [None] * len(names)
        for i, name in enumerate(names):
            if name in fixed:
                expected[i] = fixed[name]
            elif name in half:
                expected[i] = None if own_type is None else (torch.float32 if own_type in _HALF else own_type)
            elif name not in free:
                expected[i] = own_type
        for i, name in enumerate(names):
            if inputs[i] is None:
                inputs[i] = expected[i]
            elif expected[i] is not None and inputs[i] != expected[i] and name not in soft:
                raise DTypeMismatch(i, inputs[i], expected[i], source)
        if callable(self.output):
            out = self.output(inputs, attrs)
        elif attr_dtype is not None:
            out = attr_dtype
        elif self.output is None:
            out = own_type if own_type is not None else out
        else:
            out = torch_dtype(self.output)
        return inputs + [out]


class DTypeMismatch(MXNetError):
    """Input ``index`` has dtype ``got`` where the operator's rule gives ``expected``, which
    came from input ``source`` (None: from the rule itself or the output)."""

    def __init__(self, index, got, expected, source):
        super().__init__('input %d has dtype %s, expected %s' % (index, dtype_name(got), dtype_name(expected)))
        self.index, self.got, self.expected, self.source = index, got, expected, source


SAME_DTYPE = DTypeRule()
