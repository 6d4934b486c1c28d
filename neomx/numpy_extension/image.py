"""``mx.npx.image``: image operators on ``mx.np`` arrays (HWC uint8 or float images):
``to_tensor``, ``normalize``, ``resize``, ``crop``, flips and random color augmentations,
generated from the registry's ``_image_*`` operators (filled by the package)."""
