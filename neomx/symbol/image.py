"""``mx.sym.image``: the ``_image_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""
