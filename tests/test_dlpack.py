"""DLPack exchange: zero-copy with torch and NumPy, and MXNet's ctypes path (_LIB.MXNDArrayFromDLPack)."""
import ctypes

import numpy as np
import pytest
import torch
import torch.utils.dlpack

import neomx as mx
from neomx.base import NDArrayHandle, _LIB, c_str, check_call


def test_to_dlpack_for_read_shares_memory_with_torch():
    x = mx.nd.arange(6).reshape((2, 3))
    t = torch.utils.dlpack.from_dlpack(mx.nd.to_dlpack_for_read(x))
    x[0, 0] = 42
    assert t[0, 0].item() == 42
    assert t.shape == (2, 3) and t.dtype == torch.float32


def test_to_dlpack_for_write_writes_through():
    x = mx.nd.zeros((3,))
    t = torch.utils.dlpack.from_dlpack(mx.nd.to_dlpack_for_write(x))
    t += 5
    np.testing.assert_array_equal(x.asnumpy(), [5, 5, 5])
    # the method forms, as in MXNet
    t2 = torch.utils.dlpack.from_dlpack(x.to_dlpack_for_write())
    t2[1] = -1
    np.testing.assert_array_equal(x.asnumpy(), [5, -1, 5])
    assert torch.utils.dlpack.from_dlpack(x.to_dlpack_for_read())[1].item() == -1


def test_from_dlpack_of_torch_and_numpy_shares_memory():
    t = torch.arange(4, dtype=torch.float64)
    x = mx.nd.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    t[2] = 9
    assert x.dtype == np.float64 and x.asnumpy()[2] == 9
    a = np.ones((2, 2), dtype=np.int32)
    y = mx.nd.from_dlpack(a)
    a[1, 1] = 3
    assert y.dtype == np.int32 and y.asnumpy()[1, 1] == 3


def test_dunder_dlpack_for_consumers():
    x = mx.nd.array([1, 2, 3], ctx=mx.cpu())     # numpy consumes CPU memory only
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    t = torch.from_dlpack(x)
    a = np.from_dlpack(x)
    x[1] = 7
    assert t[1].item() == 7 and a[1] == 7


def test_dlpack_capsule_consumed_once():
    cap = mx.nd.to_dlpack_for_read(mx.nd.ones((2,)))
    mx.nd.from_dlpack(cap)
    with pytest.raises(Exception):
        mx.nd.from_dlpack(cap)


def test_mxnet_ctypes_from_dlpack_path():
    # MXNet 1.x's own from_dlpack, written against the C API (as in its test_dlpack.py)
    x = mx.nd.arange(6).reshape((2, 3))
    capsule = ctypes.py_object(mx.nd.to_dlpack_for_read(x))
    assert ctypes.pythonapi.PyCapsule_IsValid(capsule, c_str('dltensor'))
    pointer = ctypes.c_void_p(ctypes.pythonapi.PyCapsule_GetPointer(capsule, c_str('dltensor')))
    handle = NDArrayHandle()
    check_call(_LIB.MXNDArrayFromDLPack(pointer, ctypes.byref(handle)))
    ctypes.pythonapi.PyCapsule_SetName(capsule, c_str('used_dltensor'))
    ctypes.pythonapi.PyCapsule_SetDestructor(capsule, None)
    z = mx.nd.NDArray(handle=handle)
    np.testing.assert_array_equal(z.asnumpy(), x.asnumpy())
    x[0, 0] = 10
    assert z.asnumpy()[0, 0] == 10


def test_mxnet_ctypes_null_handle_is_an_error():
    with pytest.raises(mx.MXNetError, match='NULL'):
        _LIB.MXNDArrayFromDLPack(ctypes.c_void_p(), ctypes.byref(NDArrayHandle()))
