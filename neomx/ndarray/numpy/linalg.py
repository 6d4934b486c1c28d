"""``mx.nd.np.linalg``: ``mx.np.linalg``'s functions (filled by ``neomx.numpy_extension``)."""
