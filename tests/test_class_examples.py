"""Every public class of the documented namespaces shows a runnable ``>>>`` example.

The house standard: each public class's docstring has an Example section, which
tests/test_doctests.py runs. This test keeps the namespaces below complete: a new public
class (in a module's ``__all__``, or a public name of a namespace package) without an
example fails here, naming it.
"""
import importlib
import inspect

import pytest

NAMESPACES = [
    'neomx.optimizer', 'neomx.kvstore', 'neomx.image', 'neomx.rnn', 'neomx.profiler',
    'neomx.gluon', 'neomx.gluon.nn', 'neomx.gluon.rnn', 'neomx.gluon.data',
    'neomx.gluon.data.vision', 'neomx.gluon.data.vision.transforms', 'neomx.gluon.contrib.nn',
    'neomx.gluon.contrib.rnn', 'neomx.gluon.contrib.estimator', 'neomx.gluon.model_zoo.vision',
    'neomx.metric', 'neomx.initializer', 'neomx.lr_scheduler', 'neomx.io', 'neomx.callback',
    'neomx.recordio', 'neomx.module', 'neomx.name', 'neomx.context', 'neomx.monitor',
]

# Datasets whose examples would download their data (the repository carries MNIST only).
NEEDS_DOWNLOAD = {'CIFAR10', 'CIFAR100', 'FashionMNIST'}


def _public_classes(module):
    names = getattr(module, '__all__', None)
    if names is None:
        names = [name for name in dir(module) if not name.startswith('_')]
    for name in names:
        obj = getattr(module, name, None)
        if inspect.isclass(obj) and obj.__module__.startswith('neomx') \
                and not issubclass(obj, BaseException) and name not in NEEDS_DOWNLOAD:
            yield name, obj


@pytest.mark.parametrize('namespace', NAMESPACES)
def test_every_public_class_has_an_example(namespace):
    module = importlib.import_module(namespace)
    missing = sorted(name for name, cls in _public_classes(module) if '>>>' not in (cls.__doc__ or ''))
    assert not missing, '%s: public classes without a >>> example: %s' % (namespace, ', '.join(missing))
