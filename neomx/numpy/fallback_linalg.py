"""``mx.np.linalg`` functions handed to official NumPy (MXNet 1.9.1's ``fallback_linalg``)."""
import numpy as onp

__all__ = ['cond', 'lstsq', 'matrix_power', 'matrix_rank', 'multi_dot', 'qr']

cond = onp.linalg.cond
lstsq = onp.linalg.lstsq
matrix_power = onp.linalg.matrix_power
matrix_rank = onp.linalg.matrix_rank
multi_dot = onp.linalg.multi_dot
qr = onp.linalg.qr
