"""What the model families share: the pretrained keywords and the named constructors."""

PRETRAINED_DOC = """
    Parameters
    ----------
    pretrained : bool, default False
        Load MXNet's published ImageNet parameters (from
        :func:`neomx.gluon.model_zoo.model_store.get_model_file`).
    ctx : Context, default cpu()
        Where the pretrained parameters are loaded.
    root : str, optional
        Folder of the parameter files, ``$MXNET_HOME/models`` by default.
    **kwargs
        Passed to the network class (``classes=1000`` and the family's own options).

    Returns
    -------
    HybridBlock
        Maps images ``(batch, 3, height, width)`` to class scores ``(batch, classes)``.
"""


def named_constructor(name, summary, get_net, *args):
    """The public function ``name(**kwargs)``, which returns ``get_net(*args, **kwargs)``.

    Parameters
    ----------
    name : str
        The function's name (``'resnet18_v1'``).
    summary : str
        First line of its docstring; the pretrained keywords are documented after it.
    get_net : callable
        The family's builder (``get_resnet``), taking ``pretrained``, ``ctx`` and ``root``.
    *args
        The builder's leading arguments that select the variant (version, depth...).
    """
    def constructor(**kwargs):
        return get_net(*args, **kwargs)
    constructor.__name__ = constructor.__qualname__ = name
    constructor.__module__ = get_net.__module__
    constructor.__doc__ = summary + '\n' + PRETRAINED_DOC
    return constructor
