"""``mx.optimizer``: optimizers and updaters."""
