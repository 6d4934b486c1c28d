"""``mx.notebook``: training callbacks for Jupyter notebooks (see :mod:`.callback`).

``mx.notebook.bokeh`` is the ``bokeh`` module when it is installed, else the placeholder
class ``Bokeh_Failed_To_Import`` (as in MXNet); it is imported on first use only.
"""
from . import callback

__all__ = ['callback', 'Bokeh_Failed_To_Import']


class Bokeh_Failed_To_Import:     # noqa: N801  (MXNet's name)
    """What ``mx.notebook.bokeh`` is when bokeh is not installed (``pip install "neomx[notebook]"``)."""


def __getattr__(name):
    if name == 'bokeh':
        try:
            import bokeh  # pylint: disable=import-outside-toplevel
        except ImportError:
            return Bokeh_Failed_To_Import
        return bokeh
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
