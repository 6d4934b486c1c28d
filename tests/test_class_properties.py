"""MXNet 1.x's class properties: Context.default_ctx, AttrScope.current and
NameManager.current are read and assigned on the class, per thread."""
import threading
import warnings

import pytest

import neomx as mx
from neomx.attribute import AttrScope
from neomx.context import Context
from neomx.name import NameManager


def _in_thread(func):
    out = []
    thread = threading.Thread(target=lambda: out.append(func()))
    thread.start()
    thread.join()
    return out[0]


@pytest.fixture
def restore_scopes():
    saved = (Context._default.__dict__.get('value'), AttrScope._current.__dict__.get('value'),
             NameManager._current.__dict__.get('value'))
    yield
    Context._default.value, AttrScope._current.value, NameManager._current.value = saved


def test_default_ctx_is_assigned_per_thread(restore_scopes):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        Context.default_ctx = mx.cpu(3)
        assert Context.default_ctx == mx.cpu(3)
    assert [w.category for w in caught] == [DeprecationWarning] * 2
    assert mx.current_context() == mx.cpu(3)
    assert mx.nd.zeros(1).context == mx.cpu(3)
    assert _in_thread(mx.current_context) == mx.cpu(0)
    assert isinstance(Context.__dict__['default_ctx'], mx.base.classproperty)   # not replaced
    assert not hasattr(mx.cpu(1), '__dict__')


def test_attrscope_current_is_a_class_property(restore_scopes):
    assert isinstance(AttrScope.current, AttrScope)
    AttrScope.current = AttrScope(group='g1')
    assert mx.sym.var('a').attr('group') == 'g1'
    with AttrScope(lr='2'):
        assert AttrScope.current._attr == {'group': 'g1', 'lr': '2'}
    assert AttrScope.current._attr == {'group': 'g1'}
    assert _in_thread(lambda: AttrScope.current._attr) == {}


def test_namemanager_current_is_a_class_property(restore_scopes):
    NameManager.current = NameManager()
    assert NameManager.current.get(None, 'main') == 'main0'
    assert 'main' in NameManager.current._counter
    assert _in_thread(lambda: 'main' in NameManager.current._counter) is False
    with mx.name.Prefix('p_'):
        assert NameManager.current.get(None, 'x') == 'p_x0'
    assert NameManager.current.get(None, 'main') == 'main1'


def test_class_property_without_setter_refuses_assignment():
    class Holder(mx.base.with_metaclass(mx.base.ClassPropertyMeta, object)):
        @mx.base.classproperty
        def value(cls):
            return 1
    with pytest.raises(AttributeError, match='cannot set class property value'):
        Holder.value = 2
    Holder.other = 5            # plain class attributes are set as usual
    assert (Holder.value, Holder.other) == (1, 5)
    assert mx.base._MXClassPropertyMetaClass is mx.base.ClassPropertyMeta    # MXNet's name


def test_numpy_semantics_scopes_have_mxnet_names():
    with mx.util.np_array(True) as scope:
        assert isinstance(scope, mx.util._NumpyArrayScope) and scope._is_np_array
        assert mx.util.is_np_array()
    assert not mx.util.is_np_array()
    with mx.util.np_shape(True) as scope:
        assert isinstance(scope, mx.util._NumpyShapeScope) and scope._is_np_shape
        assert mx.util.is_np_shape()
    assert not mx.util.is_np_shape()
