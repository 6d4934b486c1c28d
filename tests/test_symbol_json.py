"""Symbol JSON: byte-level layout against MXNet 1.9.1, loading (old keys, MXNet files), checkpoints."""
import json
import os

import numpy as np
import pytest

import neomx as mx

# Written by MXNet 1.9.1 (copied from the conformance suite's golden files).
FILES = os.path.join(os.path.dirname(__file__), 'data', 'mxnet_files')

# Written by MXNet 1.9.1 for the graph of _mixed_graph() (oracle run, kept verbatim).
MXNET_JSON = r"""{
  "nodes": [
    {
      "op": "null", 
      "name": "data", 
      "attrs": {
        "__lr_mult__": "0.5", 
        "__shape__": "(2, 3)"
      }, 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "fc_weight", 
      "attrs": {"num_hidden": "4"}, 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "fc_bias", 
      "attrs": {"num_hidden": "4"}, 
      "inputs": []
    }, 
    {
      "op": "FullyConnected", 
      "name": "fc", 
      "attrs": {"num_hidden": "4"}, 
      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    }, 
    {
      "op": "null", 
      "name": "bn_gamma", 
      "attrs": {"fix_gamma": "False"}, 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "bn_beta", 
      "attrs": {"fix_gamma": "False"}, 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "bn_moving_mean", 
      "attrs": {
        "__init__": "[\"zero\", {}]", 
        "fix_gamma": "False"
      }, 
      "inputs": []
    }, 
    {
      "op": "null", 
      "name": "bn_moving_var", 
      "attrs": {
        "__init__": "[\"one\", {}]", 
        "fix_gamma": "False"
      }, 
      "inputs": []
    }, 
    {
      "op": "BatchNorm", 
      "name": "bn", 
      "attrs": {"fix_gamma": "False"}, 
      "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]
    }, 
    {
      "op": "SliceChannel", 
      "name": "sp", 
      "attrs": {
        "axis": "1", 
        "num_outputs": "2"
      }, 
      "inputs": [[8, 0, 0]]
    }, 
    {
      "op": "_mul_scalar", 
      "name": "_mulscalar0", 
      "attrs": {"scalar": "2"}, 
      "inputs": [[9, 0, 0]]
    }, 
    {
      "op": "Concat", 
      "name": "concat0", 
      "attrs": {
        "dim": "1", 
        "num_args": "2"
      }, 
      "inputs": [[9, 1, 0], [10, 0, 0]]
    }
  ], 
  "arg_nodes": [0, 1, 2, 4, 5, 6, 7], 
  "node_row_ptr": [
    0, 
    1, 
    2, 
    3, 
    4, 
    5, 
    6, 
    7, 
    8, 
    11, 
    13, 
    14, 
    15
  ], 
  "heads": [[11, 0, 0], [9, 0, 0]], 
  "attrs": {"mxnet_version": ["int", 10901]}
}"""


def _mixed_graph():
    """A variable with attributes, auto-created weights, aux states, multiple outputs, a group."""
    with mx.name.NameManager():
        data = mx.sym.var('data', shape=(2, 3), lr_mult=0.5)
        fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
        bn = mx.sym.BatchNorm(fc, fix_gamma=False, name='bn')
        parts = mx.sym.split(bn, num_outputs=2, axis=1, name='sp')
        return mx.sym.Group([mx.sym.concat(parts[1], parts[0] * 2, dim=1), parts[0]])


def test_tojson_is_byte_identical_to_mxnet():
    assert _mixed_graph().tojson() == MXNET_JSON


def test_long_arrays_take_one_line_per_item():
    xs = [mx.sym.var('x%d' % i) for i in range(11)]
    text = mx.sym.concat(*xs, dim=0, name='cc').tojson()
    assert '"arg_nodes": [\n    0, \n    1, ' in text
    assert '"inputs": [\n        [0, 0, 0], \n' in text
    assert '"attrs": {"mxnet_version": ["int", 10901]}' in text


def test_aux_inputs_carry_mutation_versions():
    data, mean, var = mx.sym.var('data'), mx.sym.var('mm'), mx.sym.var('mv')
    a = mx.sym.BatchNorm(data, moving_mean=mean, moving_var=var, name='a')
    b = mx.sym.BatchNorm(a, moving_mean=mean, moving_var=var, name='b')
    nodes = json.loads(b.tojson())['nodes']
    assert nodes[5]['inputs'][3:] == [[3, 0, 1], [4, 0, 1]]
    assert nodes[8]['inputs'][3:] == [[3, 0, 2], [4, 0, 2]]


def test_load_json_round_trip():
    net = _mixed_graph()
    back = mx.sym.load_json(net.tojson())
    assert back.tojson() == net.tojson()
    assert back.list_arguments() == net.list_arguments()
    assert back.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert back.list_outputs() == ['concat0_output', 'sp_output0']
    assert back.infer_shape()[1] == [(2, 4), (2, 2)]


def test_load_json_accepts_old_attr_and_param_keys():
    old = {'nodes': [{'op': 'null', 'name': 'x', 'attr': {'__shape__': '(2, 3)'}, 'inputs': []},
                     {'op': 'null', 'name': 'fc_weight', 'inputs': []},
                     {'op': 'FullyConnected', 'name': 'fc', 'param': {'num_hidden': '5', 'no_bias': 'True'},
                      'inputs': [[0, 0], [1, 0]]}],
           'arg_nodes': [0, 1], 'heads': [[2, 0]]}
    sym = mx.sym.load_json(json.dumps(old))
    assert sym.list_arguments() == ['x', 'fc_weight']
    assert sym.infer_shape() == ([(2, 3), (5, 3)], [(2, 5)], [])
    assert sym.list_attr() == {'no_bias': 'True', 'num_hidden': '5'}


def _fc_with_half_known_weight():
    weight = mx.sym.var('weight', shape=(128, 0))
    return mx.sym.FullyConnected(mx.sym.var('data'), weight, num_hidden=128)


def test_files_written_under_numpy_shapes_say_so():
    with mx.util.np_shape(True):
        graph_attrs = json.loads(_fc_with_half_known_weight().tojson())['attrs']
        assert mx.sym.var('x', shape=(-1, 3)).tojson().endswith(
            '"attrs": {\n    "is_np_shape": ["int", 1], \n    "mxnet_version": ["int", 10901]\n  }\n}')
    assert graph_attrs == {'is_np_shape': ['int', 1], 'mxnet_version': ['int', 10901]}
    assert 'is_np_shape' not in json.loads(_fc_with_half_known_weight().tojson())['attrs']


def test_legacy_files_read_under_numpy_shapes_get_numpy_shapes():
    # as MXNet 1.9.1: a 0 of a file without is_np_shape is an unknown dimension, () no shape
    text = (_fc_with_half_known_weight() + mx.sym.var('b', shape=())).tojson()
    with mx.util.np_shape(True):
        net = mx.sym.load_json(text)
        assert net.attr_dict()['weight'] == {'__shape__': '[128,-1]'}
        assert net.attr_dict()['b'] == {'__shape__': 'None'}
        args, outs, _ = net.infer_shape(data=(10, 784), b=(10, 128))
        assert args[1] == (128, 784) and outs == [(10, 128)]
        # a file written under NumPy shapes keeps its 0s: real sizes
        with pytest.raises(mx.base.MXNetError):
            mx.sym.load_json(_fc_with_half_known_weight().tojson()).infer_shape(data=(10, 784))
    assert mx.sym.load_json(text).attr_dict()['weight'] == {'__shape__': '(128, 0)'}


def test_load_json_errors():
    with pytest.raises(mx.base.MXNetError, match='not valid JSON'):
        mx.sym.load_json('{nope')
    bad = {'nodes': [{'op': 'NoSuchOp', 'name': 'n', 'inputs': []}], 'arg_nodes': [], 'heads': [[0, 0, 0]]}
    with pytest.raises(mx.base.MXNetError, match='NoSuchOp'):
        mx.sym.load_json(json.dumps(bad))


@pytest.mark.parametrize('name', ['dense_bn-symbol.json', 'ckpt-symbol.json'])
def test_mxnet_files_load_and_save_identically(name):
    path = os.path.join(FILES, name)
    with open(path) as f:
        text = f.read()
    assert mx.sym.load(path).tojson() == text


def test_mxnet_exported_dense_bn_runs():
    sym = mx.sym.load(os.path.join(FILES, 'dense_bn-symbol.json'))
    params = mx.nd.load(os.path.join(FILES, 'dense_bn-0000.params'))
    here = mx.current_context()     # the file loads on cpu; MXNet binds all arguments on one context
    args = {k[4:]: v.as_in_context(here) for k, v in params.items() if k.startswith('arg:')}
    aux = {k[4:]: v.as_in_context(here) for k, v in params.items() if k.startswith('aux:')}
    assert sorted(aux) == ['batchnorm0_running_mean', 'batchnorm0_running_var']
    data = mx.nd.array([[1.0, -2.0]])
    out = sym.bind(here, dict(args, data=data), aux_states=aux, grad_req='null').forward()[0]
    h = mx.nd.FullyConnected(data, args['dense0_weight'], args['dense0_bias'], num_hidden=3)
    h = mx.nd.BatchNorm(h, args['batchnorm0_gamma'], args['batchnorm0_beta'], aux['batchnorm0_running_mean'],
                        aux['batchnorm0_running_var'], fix_gamma=False, eps=1e-5)
    expected = mx.nd.FullyConnected(h, args['dense1_weight'], args['dense1_bias'], num_hidden=1)
    np.testing.assert_allclose(out.asnumpy(), expected.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), [[0.08655163645744324]], rtol=1e-6)   # MXNet 1.9.1's output


def test_save_writes_file_atomically(tmp_path):
    fname = str(tmp_path / 'net-symbol.json')
    _mixed_graph().save(fname)
    assert os.listdir(tmp_path) == ['net-symbol.json']
    assert mx.sym.load(fname).tojson() == MXNET_JSON


def test_checkpoint_round_trip(tmp_path):
    prefix = str(tmp_path / 'model')
    sym = mx.sym.BatchNorm(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc'), name='bn')
    args = {'fc_weight': mx.nd.array([[1, 2], [3, 4]]), 'fc_bias': mx.nd.array([0.5, -0.5])}
    aux = {'bn_moving_mean': mx.nd.array([1, 2]), 'bn_moving_var': mx.nd.array([3, 4])}
    mx.model.save_checkpoint(prefix, 12, sym, args, aux)
    assert sorted(os.listdir(tmp_path)) == ['model-0012.params', 'model-symbol.json']
    assert sorted(mx.nd.load(prefix + '-0012.params')) == ['arg:fc_bias', 'arg:fc_weight',
                                                           'aux:bn_moving_mean', 'aux:bn_moving_var']
    back, back_args, back_aux = mx.model.load_checkpoint(prefix, 12)
    assert back.tojson() == sym.tojson()
    assert back_args['fc_weight'].asnumpy().tolist() == [[1, 2], [3, 4]]
    assert back_aux['bn_moving_var'].asnumpy().tolist() == [3, 4]


def test_load_mxnet_checkpoint():
    sym, args, aux = mx.model.load_checkpoint(os.path.join(FILES, 'ckpt'), 3)
    assert sym.list_arguments() == ['data', 'fc_weight', 'fc_bias'] and aux == {}
    here = mx.current_context()     # the checkpoint loads on cpu
    out = sym.eval(ctx=here, data=mx.nd.array([[1.0, 1.0]]), **{k: v.as_in_context(here) for k, v in args.items()})[0]
    np.testing.assert_allclose(out.asnumpy(), [[3.5, 6.5]])
