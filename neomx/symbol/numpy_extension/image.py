"""``mx.sym.npx.image``: the Symbol forms of ``mx.npx.image``'s operators (filled by the package)."""
