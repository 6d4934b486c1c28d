"""``mx.nd.np._internal``: MXNet's internal NumPy operators (``_npi_*``), by their names without the prefix, on ``mx.np`` arrays (filled by ``neomx.numpy_extension``)."""
