"""``mx.nd.np.random``: ``mx.np.random``'s functions (filled by ``neomx.numpy_extension``)."""
