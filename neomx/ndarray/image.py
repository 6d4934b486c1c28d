"""``mx.nd.image``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
