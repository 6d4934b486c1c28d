"""``mx.sym.op``: a Symbol function for every registered operator (filled in by ``neomx.symbol``)."""
