"""``mx.nd.npx.image``: ``mx.npx.image``'s functions (filled by ``neomx.numpy_extension``)."""
