"""Shapes with unknown dimensions, as shape inference meets them.

MXNet lets a shape leave dimensions open: ``0`` under its legacy shape semantics, ``-1``
under NumPy's (where 0 is a real, zero size). Here such a *partial shape* is a tuple with
``None`` for each unknown dimension. Operators see partial shapes through *probing*: the
implementation runs on meta tensors several times, each time with other sizes in place of
the unknown dimensions, and a dimension of a result is known when every run agrees on it
-- it does not depend on the unknown sizes (slicing ``[:5]`` an unknown dimension leaves
it unknown, since a probe smaller than 5 gives less; a convolution's output channels stay
known). Probes an operator refuses (too small for a kernel) do not count; at least two
runs must succeed.
"""
from ..util import is_np_shape

__all__ = ['unknown_dim', 'as_partial', 'is_complete', 'merge', 'fits', 'probe_runs', 'agreed', 'shown',
           'agreed_outputs', 'hole_candidates']


def unknown_dim(d):
    """Whether dimension ``d`` of a user's shape is left to inference (0 or None under legacy
    shapes, negative or None under NumPy shapes)."""
    return d is None or d < (0 if is_np_shape() else 1)


def as_partial(shape):
    """A shape with ``None`` for unknown dimensions; None when nothing is known (no shape,
    or the legacy ``()``, which means "unknown")."""
    if shape is None or (not shape and not is_np_shape()):
        return None
    return tuple(None if unknown_dim(d) else int(d) for d in shape)


def is_complete(partial):
    return partial is not None and None not in partial


def merge(a, b):
    """The partial shape agreeing with both ``a`` and ``b`` (either may be None); ValueError
    when they contradict each other."""
    if a is None or b is None:
        return a if b is None else b
    if len(a) != len(b) or not fits(a, b):
        raise ValueError('%s and %s' % (shown(a), shown(b)))
    return tuple(x if x is not None else y for x, y in zip(a, b))


def fits(template, shape):
    """Whether ``shape`` agrees with ``template`` wherever both know the dimension."""
    return len(template) == len(shape) and all(t is None or d is None or t == d for t, d in zip(template, shape))


# Sizes standing in for unknown dimensions: two small runs (so that slicing shows its
# dependence on the size; 1 is below any bound), two large ones (so that kernels and strides
# fit). Every run gives each unknown dimension a size different from the other runs'.
_PROBE_SIZES = ((1, 0), (2, 1), (61, 3), (89, 3))


def probe_runs(partials, keys, tied=False):
    """For each probe run, the inputs' shapes with the unknown dimensions filled (inputs
    known not at all stay None). Inputs of one ``key`` (the same value read twice) get the
    same sizes; with ``tied`` every unknown dimension of a run gets the same size (for
    operators that need their inputs' unknown dimensions equal, as ``Concat``)."""
    slots = {}
    for key, partial in zip(keys, partials):
        for k, d in enumerate(partial or ()):
            if d is None:
                slots.setdefault((key, k), 0 if tied else len(slots))
    return [[None if p is None else tuple(base + step * slots[(key, k)] if d is None else d
                                          for k, d in enumerate(p))
             for key, p in zip(keys, partials)]
            for base, step in _PROBE_SIZES]


def agreed(results):
    """The partial shape on which the shapes of ``results`` (one per successful run) agree,
    None when fewer than two runs succeeded or they disagree on the number of dimensions."""
    results = [r for r in results if r is not None]
    if len(results) < 2 or len({len(r) for r in results}) != 1:
        return None
    return tuple(dims[0] if len(set(dims)) == 1 else None for dims in zip(*results))


def agreed_outputs(runs, data):
    """The partial shape of each output from the probe ``runs`` (each the list of output
    shapes, None for a run the operator refused), given the partial shape of the operator's
    first input ``data``.

    When the operator refused some sizes, that is, some output depends on an unknown
    dimension in a way the successful runs may not show (``slice_axis(end=5)`` refuses
    sizes under 5 and gives 5 for the others), only the dimensions the data passes through
    unchanged count as known, as MXNet's shape rules keep the data's known dimensions."""
    done = [r for r in runs if r is not None]
    if not done or len({len(r) for r in done}) != 1:
        return []
    results = [agreed([r[i] for r in done]) for i in range(len(done[0]))]
    if len(done) == len(runs):
        return results
    return [None if r is None or data is None or len(r) != len(data)
            else tuple(d if d == k else None for d, k in zip(r, data)) for r in results]


def shown(partial):
    """A partial shape as MXNet reports it: unknown dimensions 0 (legacy) or -1 (NumPy
    shapes); a shape not known at all ``()`` (legacy) or None (NumPy shapes)."""
    if partial is None:
        return None if is_np_shape() else ()
    unknown = -1 if is_np_shape() else 0
    return tuple(unknown if d is None else d for d in partial)


def hole_candidates(template, out_shape):
    """Sizes worth trying for the unknown dimensions of an input ``template`` given its
    operator's output shape: the output's sizes, the one that keeps the number of elements
    (a reshape's), and some others, so that a fill counts as the only one only where the
    output decides it (a sum's output does not tell its input's size)."""
    sizes = set(out_shape) | {base for base, _ in _PROBE_SIZES} | {2, 5}
    known = 1
    for d in template:
        known *= 1 if d is None else d
    total = 1
    for d in out_shape:
        total *= d
    if known and total % known == 0 and total // known:
        sizes.add(total // known)
    return sorted(sizes)
