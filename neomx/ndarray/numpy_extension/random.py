"""``mx.nd.npx.random``: ``mx.npx.random``'s functions (filled by ``neomx.numpy_extension``)."""
