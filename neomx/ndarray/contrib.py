"""``mx.nd.contrib``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
