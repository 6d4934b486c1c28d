"""``mx.sym.np.linalg``: ``mx.np.linalg``'s functions, which record graph nodes for Symbol arguments (filled by ``neomx.numpy_extension``)."""
