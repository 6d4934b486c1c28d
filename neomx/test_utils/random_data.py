"""Random test data: shapes, dense and sparse arrays, special matrices."""
import random

import numpy as np

from ..ndarray.ndarray import array
from .assertions import assign_each
from .env import default_context
from .tolerances import default_dtype

__all__ = ['random_arrays', 'random_uniform_arrays', 'random_sample', 'rand_shape_2d',
           'rand_shape_3d', 'rand_shape_nd', 'rand_coord_2d', 'rand_ndarray', 'rand_sparse_ndarray',
           'create_sparse_array', 'create_sparse_array_zd', 'shuffle_csr_column_indices',
           'create_vector', 'create_2d_tensor', 'get_identity_mat', 'get_identity_mat_batch',
           'new_orthonormal_matrix_2d', 'new_matrix_with_real_eigvals_2d',
           'new_matrix_with_real_eigvals_nd', 'new_sym_matrix_with_real_eigvals_2d',
           'new_sym_matrix_with_real_eigvals_nd']


def random_arrays(*shapes):
    """Standard-normal float32 numpy arrays of the given shapes (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Uniform numpy arrays, one per shape, always as a list (unlike :func:`random_arrays`, as in
    MXNet); keywords ``low`` (0), ``high`` (1) and ``dtype`` (float32)."""
    low, high = kwargs.pop('low', 0.0), kwargs.pop('high', 1.0)
    dtype = kwargs.pop('dtype', default_dtype())
    if kwargs:
        raise TypeError('random_uniform_arrays got unexpected keywords %s' % sorted(kwargs))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` distinct elements of ``population``, from Python's ``random``."""
    return random.sample(list(population), k)


def _dim(high, allow_zero_size):
    return np.random.randint(0 if allow_zero_size else 1, high + 1)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with sides up to ``dim0``, ``dim1``."""
    return _dim(dim0, allow_zero_size), _dim(dim1, allow_zero_size)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape with sides up to ``dim0``, ``dim1``, ``dim2``."""
    return _dim(dim0, allow_zero_size), _dim(dim1, allow_zero_size), _dim(dim2, allow_zero_size)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of ``num_dim`` sides, each up to ``dim``."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer point in [x_low, x_high] x [y_low, y_high]."""
    return random.randint(x_low, x_high), random.randint(y_low, y_high)


def _csr_generation_check(num_rows, num_cols, density, distribution):
    if density < 0 or density > 1:
        raise ValueError("density has to be between 0 and 1")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    if distribution == 'powerlaw' and int(num_rows * num_cols * density) < 2 * num_rows:
        raise ValueError("not supported for this density: %s for this shape (%s, %s). Please keep "
                         "the number of non-zeros at least twice the number of rows"
                         % (density, num_rows, num_cols))


def _powerlaw_row_counts(num_rows, num_cols, density):
    """Non-zeros of each row of the power-law csr generator: one per row first, then row i
    filled up to 2**(i+1) columns (whole rows once that exceeds the width) until the
    matrix holds ``int(rows * cols * density)`` entries."""
    left = int(num_rows * num_cols * density)
    counts = np.zeros(num_rows, dtype=np.int64)
    first = min(num_rows, left)
    counts[:first] = 1
    left -= first
    limit = 2
    for row in range(num_rows):
        if left <= 0:
            break
        width = min(num_cols, limit)
        if width == num_cols and left > width:
            left -= width - counts[row]
            counts[row] = width
            continue
        extra = min(width - counts[row], left)
        counts[row] += extra
        left -= extra
        limit *= 2
    if left > 0:
        raise ValueError("not supported for this density: %s for this shape (%s,%s)" % (density, num_rows, num_cols))
    return counts


def _csr_parts_uniform(num_rows, num_cols, density, dtype, data_init, shuffle):
    """(values, indices, indptr) of a uniformly random csr matrix, never dense: ``density``
    of the positions, drawn without replacement."""
    total = int(num_rows * num_cols * density)
    keys = np.sort(np.random.choice(num_rows * num_cols, size=total, replace=False)) if total else np.zeros(0, np.int64)
    rows, cols = keys // num_cols, keys % num_cols
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=num_rows))]).astype(np.int64)
    values = np.random.rand(total).astype(dtype) if data_init is None else np.full(total, data_init, dtype=dtype)
    if shuffle:
        for r in range(num_rows):
            np.random.shuffle(cols[indptr[r]:indptr[r + 1]])
    return values, cols.astype(np.int64), indptr


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None, data_init=None,
                        rsp_indices=None, modifier_func=None, shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts, built compressed (memory proportional to the
    stored entries).

    Returns ``(arr, (values, indices))`` for row_sparse (numpy arrays) and
    ``(arr, (indptr, indices, data))`` for csr (NDArrays). ``distribution`` is 'uniform' or,
    for csr, 'powerlaw' (row i holds about twice the entries of row i-1).
    """
    from ..ndarray.sparse_arrays import csr_matrix, row_sparse_array, zeros as sparse_zeros
    ctx = ctx or default_context()
    density = np.random.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = distribution or 'uniform'
    if stype == 'row_sparse':
        if distribution != 'uniform':
            raise ValueError('distribution %s is not supported for row_sparse' % distribution)
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices, dtype=np.int64)
        else:
            indices = np.nonzero(np.random.rand(shape[0]) < density)[0]
        if indices.shape[0] == 0:
            return sparse_zeros('row_sparse', shape, ctx=ctx, dtype=dtype), (np.array([], dtype=dtype), np.array([]))
        values = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            values.fill(data_init)
        if modifier_func is not None:
            values = assign_each(values, modifier_func).astype(dtype)
        return row_sparse_array((values, indices), shape=shape, dtype=dtype, ctx=ctx), (values, indices)
    if stype != 'csr':
        raise ValueError('unknown storage type %r' % (stype,))
    if len(shape) != 2:
        raise ValueError('csr needs a 2-D shape, got %s' % (shape,))
    num_rows, num_cols = shape
    _csr_generation_check(num_rows, num_cols, density, distribution)
    if distribution == 'uniform':
        values, cols, indptr = _csr_parts_uniform(num_rows, num_cols, density, dtype, data_init,
                                                  shuffle_csr_indices)
    elif distribution == 'powerlaw':
        counts = _powerlaw_row_counts(num_rows, num_cols, density)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cols = np.concatenate([np.arange(c) for c in counts]).astype(np.int64)
        values = (1 + np.random.uniform(0.001, 2, size=len(cols))).astype(dtype)
    else:
        raise ValueError('distribution not supported: %s' % distribution)
    if modifier_func is not None:
        values = assign_each(values, modifier_func).astype(dtype)
    csr = csr_matrix((values, cols, indptr), shape=shape, dtype=dtype, ctx=ctx)
    return csr, (csr.indptr, csr.indices, csr.data)


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray: standard normal values for default storage, else ``rand_sparse_ndarray``."""
    ctx = ctx or default_context()
    if stype == 'default':
        return array(random_arrays(shape), ctx=ctx, dtype=dtype or default_dtype())
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                               modifier_func=modifier_func, distribution=distribution,
                               shuffle_csr_indices=shuffle_csr_indices, ctx=ctx)[0]


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=0.5, shuffle_csr_indices=False):
    """A random array of ``stype``, ``density`` of it filled."""
    if stype == 'default':
        return rand_ndarray(shape, dtype=dtype)
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype, data_init=data_init,
                               rsp_indices=rsp_indices, modifier_func=modifier_func,
                               shuffle_csr_indices=shuffle_csr_indices)[0]


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` that also allows density 0 (an all-zero array)."""
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of a scipy csr matrix, in place (a csr
    matrix need not have sorted columns)."""
    for r in range(len(csr.indptr) - 1):
        part = np.array(csr.indices[csr.indptr[r]:csr.indptr[r + 1]])
        np.random.shuffle(part)
        csr.indices[csr.indptr[r]:csr.indptr[r + 1]] = part


def create_vector(size, dtype=np.int64):
    """``arange(size)`` as an NDArray (large-tensor tests)."""
    return array(np.arange(0, size), dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A (rows, columns) NDArray whose row i holds i."""
    col = np.arange(0, rows).reshape(rows, 1)
    return array(np.broadcast_to(col, (rows, columns)), dtype=dtype)


def get_identity_mat(size):
    """The identity matrix of ``size`` as an NDArray."""
    return array(np.eye(size))


def get_identity_mat_batch(size):
    """A batch of two identity matrices of ``size`` as an NDArray."""
    return array(np.stack([np.eye(size), np.eye(size)]))


def new_orthonormal_matrix_2d(n):
    """A random n x n orthonormal matrix (QR of a normal matrix)."""
    q, _ = np.linalg.qr(np.random.normal(size=(n, n)))
    return q


def _spread_eigvals(n):
    """n eigenvalues of magnitude in [1, 2] with random signs, well apart from zero."""
    return np.random.uniform(1.0, 2.0, size=n) * np.random.choice([-1.0, 1.0], size=n)


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric n x n matrix with eigenvalues of magnitude in [1, 2]."""
    q = new_orthonormal_matrix_2d(n)
    return (q * _spread_eigvals(n)) @ q.T


def new_matrix_with_real_eigvals_2d(n):
    """A random (non-symmetric) n x n matrix with real eigenvalues of magnitude in [1, 2]."""
    while True:
        p = np.random.normal(size=(n, n))
        if abs(np.linalg.det(p)) > 0.5:
            return (p * _spread_eigvals(n)) @ np.linalg.inv(p)


def _batch_of(make, shape):
    n = shape[-1]
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.stack([make(n) for _ in range(batch)]).reshape(shape)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch (``shape[:-2]``) of ``new_sym_matrix_with_real_eigvals_2d``."""
    return _batch_of(new_sym_matrix_with_real_eigvals_2d, shape)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch (``shape[:-2]``) of ``new_matrix_with_real_eigvals_2d``."""
    return _batch_of(new_matrix_with_real_eigvals_2d, shape)
