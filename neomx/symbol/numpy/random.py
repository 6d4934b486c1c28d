"""``mx.sym.np.random``: ``mx.np.random``'s functions, which record graph nodes for Symbol arguments (filled by ``neomx.numpy_extension``)."""
