"""Kubernetes manifests as Python objects: YAML in and out, and validation against a CRD.

PyYAML and jsonschema are optional (``pip install "neomx[kubeflow]"``); they are imported
where used.
"""
from ..base import MXNetError

__all__ = ['load_manifest', 'dump_manifest', 'crd_schema', 'validate']


def _yaml():
    try:
        import yaml
    except ImportError:
        raise MXNetError('Kubernetes manifests need PyYAML: pip install "neomx[kubeflow]"') from None
    return yaml


def load_manifest(path):
    """The single YAML document of the file ``path``, as a dict."""
    yaml = _yaml()
    try:
        with open(path, encoding='utf-8') as f:
            manifest = yaml.load(f, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
    except OSError as err:
        raise MXNetError('cannot open %s: %s' % (path, err.strerror or err)) from None
    except yaml.YAMLError as err:
        raise MXNetError('%s is not valid YAML: %s' % (path, err)) from None
    if not isinstance(manifest, dict):
        raise MXNetError('%s does not hold a Kubernetes object (a YAML mapping)' % path)
    return manifest


def dump_manifest(manifest, comments=()):
    """YAML text of ``manifest`` (keys in their order), after ``comments`` as ``#`` lines."""
    header = ''.join('# %s\n' % line if line else '#\n' for line in comments)
    return header + _yaml().safe_dump(manifest, sort_keys=False, default_flow_style=False, width=100)


def crd_schema(crd_path, version=None):
    """The ``openAPIV3Schema`` of a CustomResourceDefinition file (its storage version by default)."""
    crd = load_manifest(crd_path)
    versions = crd.get('spec', {}).get('versions', [])
    for entry in versions:
        if entry.get('name') == version or (version is None and entry.get('storage', len(versions) == 1)):
            return entry['schema']['openAPIV3Schema']
    raise MXNetError('%s has no version %s' % (crd_path, version or '(storage)'))


def validate(manifest, schema):
    """Raise MXNetError listing every place where ``manifest`` breaks the CRD ``schema``."""
    try:
        import jsonschema
    except ImportError:
        raise MXNetError('validating manifests needs jsonschema: pip install "neomx[kubeflow]"') from None
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    if errors:
        raise MXNetError('%s %s does not match its CRD:\n%s' % (
            manifest.get('kind'), manifest.get('metadata', {}).get('name'),
            '\n'.join('  %s: %s' % ('.'.join(map(str, e.absolute_path)) or '(top)', e.message) for e in errors)))
