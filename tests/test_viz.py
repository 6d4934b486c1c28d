"""mx.viz: print_summary's table and plot_network's graph, checked against MXNet 1.9.1's output."""
import shutil
import sys

import numpy as np
import pytest

import neomx as mx


def conv_net():
    data = mx.sym.var('data')
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name='conv1')
    net = mx.sym.BatchNorm(net, name='bn1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.Pooling(net, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool1')
    net = mx.sym.Flatten(net, name='flat')
    net = mx.sym.FullyConnected(net, num_hidden=5, name='fc')
    return mx.sym.SoftmaxOutput(net, name='out')


SHAPES = {'data': (1, 1, 8, 8)}

# MXNet 1.9.1: mx.viz.print_summary(conv_net(), shape={'data': (1, 1, 8, 8)}, line_length=100)
MXNET_SUMMARY = """\
____________________________________________________________________________________________________
Layer (type)                                Output Shape        Param #   Previous Layer            
====================================================================================================
data(null)                                  1x8x8               0                                   
____________________________________________________________________________________________________
conv1(Convolution)                          4x6x6               40        data                      
____________________________________________________________________________________________________
bn1(BatchNorm)                              4x6x6               8         conv1                     
____________________________________________________________________________________________________
relu1(Activation)                           4x6x6               0         bn1                       
____________________________________________________________________________________________________
pool1(Pooling)                              4x3x3               0         relu1                     
____________________________________________________________________________________________________
flat(Flatten)                               36                  0         pool1                     
____________________________________________________________________________________________________
fc(FullyConnected)                          5                   185       flat                      
____________________________________________________________________________________________________
out(SoftmaxOutput)                          5                   0         fc                        
====================================================================================================
Total params: 233
____________________________________________________________________________________________________
"""


def test_print_summary_matches_mxnet(capsys):
    mx.viz.print_summary(conv_net(), shape=SHAPES, line_length=100)
    assert capsys.readouterr().out == MXNET_SUMMARY


def test_print_summary_lists_every_input_and_its_parameters(capsys):
    # MXNet shows only the first input and miscounts the second branch; each is shown here.
    a, b = mx.sym.var('a'), mx.sym.var('b')
    joined = mx.sym.Concat(mx.sym.FullyConnected(a, num_hidden=2, name='fa'),
                           mx.sym.FullyConnected(b, num_hidden=3, name='fb'), name='cat')
    mx.viz.print_summary(joined, shape={'a': (2, 4), 'b': (2, 5)}, line_length=80)
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines() if not set(line) <= set('_=')]
    assert lines[1:] == ['a(null)                            4               0',
                         'fa(FullyConnected)                 2               10      a',
                         'b(null)                            5               0',
                         'fb(FullyConnected)                 3               18      b',
                         'cat(Concat)                        5               0       fa',
                         '                                                           fb',
                         'Total params: 28']


def test_print_summary_without_shapes(capsys):
    mx.viz.print_summary(conv_net())
    out = capsys.readouterr().out
    assert 'conv1(Convolution)' in out and 'Total params: 0' in out


def test_print_summary_errors():
    with pytest.raises(TypeError, match='Symbol'):
        mx.viz.print_summary('net')
    with pytest.raises(ValueError, match='incomplete'), pytest.warns(UserWarning):
        mx.viz.print_summary(conv_net(), shape={'out_label': (1,)})


# -------------------------------------------------------------- plot_network
graphviz = pytest.importorskip('graphviz')


def dot_lines(graph):
    return [line.strip() for line in graph.source.splitlines()]


def test_plot_network_nodes_and_edges():
    graph = mx.viz.plot_network(conv_net(), shape=SHAPES, title='convnet', save_format='png')
    assert isinstance(graph, graphviz.Digraph)
    assert graph.name == 'convnet' and graph.format == 'png'
    lines = dot_lines(graph)
    declared = [line.split(' [')[0] for line in lines if ' [label=' in line and '->' not in line]
    assert declared == ['data', 'conv1', 'bn1', 'relu1', 'pool1', 'flat', 'fc', 'out_label', 'out']
    edges = {line.split(' [')[0]: line for line in lines if '->' in line}
    assert sorted(edges) == sorted(['conv1 -> data', 'bn1 -> conv1', 'relu1 -> bn1', 'pool1 -> relu1',
                                    'flat -> pool1', 'fc -> flat', 'out -> fc', 'out -> out_label'])
    # MXNet 1.9.1's labels and colours
    assert 'conv1 -> data [label="1x8x8"' in edges['conv1 -> data']
    assert 'label=36' in edges['fc -> flat']
    source = graph.source
    assert 'conv1 [label="Convolution\n3x3/1, 4" fillcolor="#fb8072"' in source
    assert 'pool1 [label="Pooling\nmax, 2x2/2x2" fillcolor="#80b1d3"' in source
    assert 'relu1 [label="Activation\nrelu" fillcolor="#ffffb3"' in source
    assert 'bn1 [label=bn1 fillcolor="#bebada"' in source
    assert 'data [label=data fillcolor="#8dd3c7"' in source and 'shape=oval' in source


def test_plot_network_weights_types_and_attributes():
    graph = mx.viz.plot_network(conv_net(), shape=SHAPES, dtype={'data': np.float32},
                                node_attrs={'fixedsize': 'false'}, hide_weights=False)
    lines = dot_lines(graph)
    assert 'conv1 -> conv1_weight [label="1x3x3(float32)" arrowtail=open dir=back]' in lines
    assert any(line.startswith('bn1 -> bn1_moving_var') for line in lines)
    assert any(line.startswith('conv1_weight [label=conv1_weight') for line in lines)
    assert 'conv1 -> data [label="1x8x8(float32)" arrowtail=open dir=back]' in lines
    assert 'fixedsize=false' in graph.source and 'fixedsize=true' not in graph.source


def test_plot_network_without_shapes():
    lines = dot_lines(mx.viz.plot_network(conv_net()))
    assert 'fc -> flat [label="" arrowtail=open dir=back]' in lines
    assert not any('_weight' in line for line in lines)


def test_plot_network_needs_the_graphviz_package(monkeypatch):
    monkeypatch.setitem(sys.modules, 'graphviz', None)
    with pytest.raises(ImportError, match=r'pip install "neomx\[viz\]"'):
        mx.viz.plot_network(conv_net())


@pytest.mark.skipif(shutil.which('dot') is None, reason='the Graphviz binaries are not installed')
def test_plot_network_renders(tmp_path):
    path = mx.viz.plot_network(conv_net(), save_format='svg').render(str(tmp_path / 'net'))
    assert open(path).read().lstrip().startswith('<?xml')
