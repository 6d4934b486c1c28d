"""``mx.nd.op``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
