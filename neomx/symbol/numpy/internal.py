"""``mx.sym.np._internal``: MXNet's internal NumPy operators (``_npi_*``), by their names without the prefix, recording ``mx.sym.np._Symbol`` nodes (filled by ``neomx.numpy_extension``)."""
