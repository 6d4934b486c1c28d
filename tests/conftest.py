"""Suite-wide options.

``pytest --default-context 'gpu(0)'`` runs every test with that context as the current
context of the test's thread (what ``mx.cpu()``-less calls and
``mx.test_utils.default_context()`` use), as MXNet's GPU suite re-runs its CPU tests with
``set_default_context(mx.gpu(0))``.
"""
import pytest


def pytest_addoption(parser):
    parser.addoption('--default-context', default=None, metavar='CTX',
                     help="run each test with this current context, e.g. 'gpu(0)' (default: cpu(0))")


@pytest.fixture(autouse=True)
def _default_context(request):
    wanted = request.config.getoption('--default-context')
    if wanted is None:
        yield
        return
    from neomx.context import as_context
    with as_context(wanted):
        yield
