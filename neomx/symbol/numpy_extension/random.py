"""``mx.sym.npx.random``: the Symbol forms of ``mx.npx.random`` (filled by ``neomx.numpy_extension``)."""
