"""gluon.model_zoo.vision against MXNet 1.9.1: parameter names and shapes (what makes MXNet's
pretrained files load), forward outputs, and the pretrained-parameter store.

Oracle literals were recorded with MXNet 1.9.1 (one fresh NameManager per network).
"""
import hashlib
import zipfile

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.model_zoo import model_store, vision

from device_tolerance import kernel_tolerance

# Every name get_model knows, by MXNet.
ALL_MODELS = ['resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
              'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
              'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
              'alexnet', 'densenet121', 'densenet161', 'densenet169', 'densenet201',
              'squeezenet1.0', 'squeezenet1.1', 'inceptionv3',
              'mobilenet1.0', 'mobilenet0.75', 'mobilenet0.5', 'mobilenet0.25',
              'mobilenetv2_1.0', 'mobilenetv2_0.75', 'mobilenetv2_0.5', 'mobilenetv2_0.25']

# The smallest input each family accepts cheaply (fixed-size final poolings need 224 / 299).
_INPUT_SIZES = [('resnet', 32), ('vgg', 32), ('alexnet', 64), ('densenet', 224),
                ('squeezenet', 224), ('inceptionv3', 299), ('mobilenet', 32)]


def _input_size(name):
    return next(size for family, size in _INPUT_SIZES if name.startswith(family))


def _build(name, size, **kwargs):
    """Network ``name`` with a fresh NameManager (so its prefix ends in 0), initialised by a
    forward pass on zeros of shape ``(1, 3, size, size)``."""
    with mx.name.NameManager():
        net = vision.get_model(name, **kwargs)
    net.initialize()
    net(mx.nd.zeros((1, 3, size, size)))
    return net


def _digest(items):
    """Short sha1 of a ``name shape`` listing (the same function made the oracle literals)."""
    text = '\n'.join('%s %s' % (key, tuple(shape)) for key, shape in items)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _set_deterministic_params(net, seed=0):
    """Fill the parameters, in sorted name order, from ``RandomState(seed)``: He-scaled
    normal weights, gammas and variances in [0.5, 1.5), the rest in [-0.1, 0.1).
    Returns the RandomState for drawing the input next (as the oracle run did)."""
    rs = np.random.RandomState(seed)
    for key, param in sorted(net.collect_params().items()):
        shape = param.shape
        if key.endswith('weight'):
            data = rs.normal(0, np.sqrt(2.0 / np.prod(shape[1:])), shape)
        elif key.endswith(('gamma', 'running_var')):
            data = rs.uniform(0.5, 1.5, shape)
        else:
            data = rs.uniform(-0.1, 0.1, shape)
        param.set_data(mx.nd.array(data.astype(np.float32)))
    return rs


# (name, input size, parameter count, scalar count, digest of collect_params() in order,
#  digest of the sorted structural names used by save_parameters, spot checks)
PARAM_CASES = [
    ('resnet18_v1', 64, 102, 11699112, 'fe0cf570d0bff922', '81981fd088e2be4e',
     [('resnetv10_conv0_weight', (64, 3, 7, 7)), ('resnetv10_stage1_conv0_weight', (64, 64, 3, 3)),
      ('resnetv10_stage3_batchnorm0_gamma', (256,)), ('resnetv10_dense0_weight', (1000, 512))]),
    ('resnet50_v2', 64, 259, 25595060, '91eb3e199b2176e6', '8e6a24b460fc3a65',
     [('resnetv20_stage3_batchnorm2_running_var', (256,)), ('resnetv20_dense0_bias', (1000,))]),
    ('vgg11_bn', 32, 54, 32211048, 'e6c1e2bc4f4208cb', '7ad67db7e882fa55',
     [('vgg0_batchnorm4_beta', (512,)), ('vgg0_dense0_weight', (4096, 512)),
      ('vgg0_dense2_bias', (1000,))]),
    ('alexnet', 64, 16, 24400680, 'e6cf7345929d16a0', 'f6e53e2a294ec5c4',
     [('alexnet0_conv4_weight', (256, 256, 3, 3)), ('alexnet0_dense2_bias', (1000,))]),
    ('densenet121', 224, 606, 8062504, '57a4c8555398f1a5', 'ed4854c4d3d7ab9f',
     [('densenet0_stage3_batchnorm21_running_var', (128,)), ('densenet0_dense0_bias', (1000,))]),
    ('squeezenet1.1', 224, 52, 1235496, '189ed976bff56471', 'c292a2d58ce952c2',
     [('squeezenet0_conv13_weight', (48, 256, 1, 1)), ('squeezenet0_conv25_bias', (1000,))]),
    ('inceptionv3', 299, 472, 23869000, 'fc986458e7c138b9', 'eca293ee2620bebf',
     [('inception30_C2_batchnorm7_gamma', (160,)), ('inception30_dense0_bias', (1000,))]),
    ('mobilenet1.0', 64, 137, 4253864, 'e83131960a3fee47', '5adc6acd9108a737',
     [('mobilenet0_batchnorm13_running_mean', (512,)), ('mobilenet0_dense0_bias', (1000,))]),
    ('mobilenetv2_0.25', 32, 266, 1526856, '512f6b10ceb2ea62', 'b45851d275f8a0c1',
     [('mobilenetv20_features_linearbottleneck8_batchnorm1_running_mean', (96,)),
      ('mobilenetv20_output_pred_weight', (1000, 1280, 1, 1))]),
]


@pytest.mark.parametrize('name,size,count,total,full_digest,structural_digest,spots', PARAM_CASES,
                         ids=[case[0] for case in PARAM_CASES])
def test_parameter_names_and_shapes_match_mxnet(name, size, count, total, full_digest,
                                                structural_digest, spots):
    net = _build(name, size)
    params = net.collect_params()
    full = [(key, param.shape) for key, param in params.items()]
    assert len(full) == count
    assert sum(int(np.prod(shape)) for _, shape in full) == total
    for key, shape in spots:
        assert params[key].shape == shape
    assert _digest(full) == full_digest
    structural = sorted((key, p.shape) for key, p in net._collect_params_with_prefix().items())
    assert _digest(structural) == structural_digest


# sha1 (16 hex digits) of MXNet 1.9.1's ``net(mx.sym.var('data')).tojson()`` for each
# network (fresh NameManager): the graph ``export`` writes, byte for byte.
SYMBOL_DIGESTS = [
    ('resnet18_v1', 'ef16f4ac632e49de'),
    ('resnet34_v1', 'c3b5287254411ea7'),
    ('resnet50_v1', '4ad2dbde66765f8f'),
    ('resnet101_v1', '110bb3145ea197e7'),
    ('resnet152_v1', '7574aa42a15c600a'),
    ('resnet18_v2', '723ce9b2c0c05fa4'),
    ('resnet34_v2', '1a206e77e6582c82'),
    ('resnet50_v2', '4679863b37261c7a'),
    ('resnet101_v2', '02eda4956838406d'),
    ('resnet152_v2', '929d5548d33d5688'),
    ('vgg11', 'a7f1585ca4d12948'),
    ('vgg13', '3562015db407b5fd'),
    ('vgg16', '688baa801fa4b979'),
    ('vgg19', '35df5a15133d475a'),
    ('vgg11_bn', '37460cab0875aece'),
    ('vgg13_bn', '1110b4b4e62a5c17'),
    ('vgg16_bn', 'cf4ea8385af99683'),
    ('vgg19_bn', 'a67333b1057bd6b5'),
    ('alexnet', '12e0539d7accebab'),
    ('densenet121', '0c959c08310a68f7'),
    ('densenet161', '15f8c8e3aee388af'),
    ('densenet169', '1b492044f2dc5b5f'),
    ('densenet201', 'aa3d7abc5a8da5b1'),
    ('squeezenet1.0', '9e6f0ecd2a5fdfeb'),
    ('squeezenet1.1', '06ae4996745db6e1'),
    ('inceptionv3', '8fd7ab3f7af5b70d'),
    ('mobilenet1.0', '60d21610dab4ed37'),
    ('mobilenet0.75', 'b557179d1eb182e6'),
    ('mobilenet0.5', 'd82dee1f71c1b83d'),
    ('mobilenet0.25', 'f920e6ee8f94a23d'),
    ('mobilenetv2_1.0', '0331034a25a13101'),
    ('mobilenetv2_0.75', '7788057f07da0af0'),
    ('mobilenetv2_0.5', '4417c54be4bd1de8'),
    ('mobilenetv2_0.25', '4fec791cb41d305f'),
]


@pytest.mark.parametrize('name,digest', SYMBOL_DIGESTS, ids=[case[0] for case in SYMBOL_DIGESTS])
def test_exported_graph_is_mxnets(name, digest):
    with mx.name.NameManager():
        net = vision.get_model(name)
    text = net(mx.sym.var('data')).tojson()
    assert hashlib.sha1(text.encode()).hexdigest()[:16] == digest


@pytest.mark.parametrize('name', ALL_MODELS)
def test_forward_shape_of_every_model(name):
    size = _input_size(name)
    net = _build(name, size, classes=10)
    assert net(mx.nd.ones((1, 3, size, size))).shape == (1, 10)


def test_resnet_thumbnail_and_residual_blocks():
    net = vision.resnet18_v1(thumbnail=True, classes=10)
    net.initialize()
    assert net(mx.nd.ones((2, 3, 32, 32))).shape == (2, 10)
    assert net.collect_params()[net.prefix + 'conv0_weight'].shape == (64, 3, 3, 3)
    block = vision.BottleneckV2(256, 2, downsample=True, in_channels=64)
    block.initialize()
    assert block(mx.nd.ones((1, 64, 9, 9))).shape == (1, 256, 5, 5)


# (name, input size, output[0, ::125], sum, sum of |output|), recorded with MXNet 1.9.1
NUMERIC_CASES = [
    ('resnet18_v1', 64, [20.4163, 30.7835, -13.3372, 15.2941, -7.69092, -3.85151, -1.15715,
                         7.34338], 1598.9468, 16069.565),
    ('mobilenet1.0', 64, [-0.913113, 0.60689, -1.02204, -0.337988, -0.0476371, -0.0347744,
                          -0.555981, -0.339294], 12.373287, 883.22687),
]


@pytest.mark.parametrize('name,size,values,total,abs_total', NUMERIC_CASES,
                         ids=[case[0] for case in NUMERIC_CASES])
def test_forward_matches_mxnet(name, size, values, total, abs_total):
    net = _build(name, size)
    rs = _set_deterministic_params(net)
    x = mx.nd.array(rs.uniform(0, 1, (1, 3, size, size)).astype(np.float32))
    out = net(x).asnumpy()
    scale = np.abs(out).max()
    np.testing.assert_allclose(out[0, ::125], values, **kernel_tolerance(1e-4, 1e-5 * scale, scale))
    np.testing.assert_allclose(out.sum(), total, **kernel_tolerance(1e-4, 1e-4 * scale, scale))
    np.testing.assert_allclose(np.abs(out).sum(), abs_total, **kernel_tolerance(1e-5))
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), out, **kernel_tolerance(1e-5, 1e-5 * scale, scale))


def test_get_model_names():
    assert isinstance(vision.get_model('SqueezeNet1.1'), vision.SqueezeNet)
    with pytest.raises(ValueError, match='Model foo is not supported. Available options are'):
        vision.get_model('foo')
    for constructor in ('resnet152_v2', 'vgg19_bn', 'densenet201', 'squeezenet1_0', 'inception_v3',
                        'mobilenet0_75', 'mobilenet_v2_0_25', 'get_resnet', 'get_vgg',
                        'get_mobilenet', 'get_mobilenet_v2'):
        assert getattr(vision, constructor).__name__ == constructor


# ------------------------------------------------------------------------ pretrained store
@pytest.fixture
def offline_store(tmp_path, monkeypatch):
    """``MXNET_HOME`` in a temporary folder and an empty ``file://`` model repository: the
    store behaves as without network, deterministically."""
    repo = tmp_path / 'repo'
    (repo / 'gluon' / 'models').mkdir(parents=True)
    monkeypatch.setenv('MXNET_HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('MXNET_GLUON_REPO', repo.as_uri())
    return tmp_path


def _saved_mobilenet(path):
    """A mobilenet0.25 with deterministic weights, saved to ``path``; returns its output on a
    fixed input and that input."""
    net = _build('mobilenet0.25', 32)
    rs = _set_deterministic_params(net)
    x = mx.nd.array(rs.uniform(0, 1, (1, 3, 32, 32)).astype(np.float32))
    net.save_parameters(str(path))
    return net(x).asnumpy(), x


def test_pretrained_missing_file_says_where_to_put_it(offline_store):
    root = offline_store / 'home' / 'models'
    with pytest.raises(RuntimeError, match=r'resnet18_v1-a0666292\.params are not in .*'
                                           r'Without network access') as info:
        vision.resnet18_v1(pretrained=True)
    assert str(root) in str(info.value)
    # A file that fails the sha1 check is fetched again, and fails the same way offline.
    (root / 'resnet18_v1-a0666292.params').write_bytes(b'corrupt')
    with pytest.raises(RuntimeError, match='could not be downloaded'):
        vision.get_model('resnet18_v1', pretrained=True)


def test_pretrained_loads_from_root(offline_store, monkeypatch):
    root = offline_store / 'weights'
    root.mkdir()
    expected, x = _saved_mobilenet(root / 'mobilenet0.25-9f83e440.params')
    monkeypatch.setattr(model_store, 'check_sha1', lambda filename, sha1_hash: True)
    net = vision.mobilenet0_25(pretrained=True, root=str(root), ctx=mx.cpu(1))
    # every parameter on the asked context (names depend on how many networks the process made)
    assert {tuple(p.list_ctx()) for p in net.collect_params().values()} == {(mx.cpu(1),)}
    # expected was computed on the current context, which may be a GPU's (TF32) kernels
    np.testing.assert_allclose(net(x.as_in_context(mx.cpu(1))).asnumpy(), expected,
                               **kernel_tolerance(1e-6, scale=np.abs(expected).max()))


def test_pretrained_download_unzips_and_checks_sha1(offline_store, monkeypatch):
    params = offline_store / 'mobilenet0.25-9f83e440.params'
    expected, x = _saved_mobilenet(params)
    with zipfile.ZipFile(offline_store / 'repo' / 'gluon' / 'models' /
                         'mobilenet0.25-9f83e440.zip', 'w') as archive:
        archive.write(params, params.name)
    with pytest.raises(ValueError, match='Downloaded file has different hash'):
        model_store.get_model_file('mobilenet0.25')
    monkeypatch.setattr(model_store, 'check_sha1', lambda filename, sha1_hash: True)
    net = vision.get_model('mobilenet0.25', pretrained=True, ctx=mx.current_context())   # default: cpu
    np.testing.assert_allclose(net(x).asnumpy(), expected, **kernel_tolerance(1e-6, scale=np.abs(expected).max()))
    models = offline_store / 'home' / 'models'
    assert sorted(p.name for p in models.iterdir()) == ['mobilenet0.25-9f83e440.params']
    model_store.purge()
    assert list(models.iterdir()) == []


def test_unknown_pretrained_model():
    with pytest.raises(ValueError, match='Pretrained model for mobilenet0.30 is not available'):
        vision.get_mobilenet(0.3, pretrained=True)
    assert model_store.short_hash('mobilenetv2_0.5') == 'aabd26cd'
