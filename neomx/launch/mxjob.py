"""Convert an MXJob (Training Operator <= v1.8) into a Trainer v2 TrainJob or a v1 PyTorchJob.

    python -m neomx.launch --from-mxjob old.yaml [--to trainjob|pytorchjob] [--image IMG] [-o new.yaml]

MXNet's parameter-server jobs have Scheduler, Server and Worker replicas. neomx's distributed
KVStore all-reduces among the workers over torch.distributed, so only the workers remain:
they keep their count, image, resources, volumes, environment and command; the command runs
under ``python -m neomx.compat`` so that ``import mxnet`` gets neomx. The Scheduler's role
(finding each other) goes to torch's rendezvous; the Servers are dropped. What changes and
the MXNet-only flags of the command are explained in comments at the top of the output.
"""
import argparse
import copy
import os
import sys

from ..base import MXNetError
from ._kube_yaml import dump_manifest, load_manifest

__all__ = ['convert', 'main']

_TRAINJOB_RUNTIME = 'torch-distributed'
_TRAINJOB_CONTAINER = 'trainer'         # the container of the torch-distributed runtime
_TRAINJOB_JOB = 'trainer-node'          # its replicated job
_PYTORCH_CONTAINER = 'pytorch'          # where the v1 operator looks for the port and env
_PYTORCH_PORT = {'name': 'pytorchjob-port', 'containerPort': 23456}
_COMPAT = ['-m', 'neomx.compat']
# Pod spec fields a TrainJob's podSpecOverrides can carry.
_OVERRIDABLE = ('nodeSelector', 'tolerations', 'serviceAccountName')

# What each MXNet-only command-line value or environment variable means under neomx.
_KVSTORE_NOTES = {
    'dist_sync': 'dist_sync: neomx all-reduces gradients among the workers (gloo on CPU, NCCL on '
                 'GPU); the result equals MXNet\'s synchronous parameter servers.',
    'dist_device_sync': 'dist_device_sync: as dist_sync (neomx reduces on the device the arrays '
                        'are on); no servers needed.',
    'dist_async': 'dist_async: neomx shards the weights over all worker processes (a key whole on '
                  'one worker, a big one cut into a part per worker) and applies each push as it '
                  'arrives (torch.distributed.rpc); no server pods.',
    'dist_sync_device': 'dist_sync_device: as dist_sync under neomx; no servers needed.',
}
_FLAG_NOTES = {
    '--gpus': '--gpus: device ids are those the pod sees; with one process per pod keep "0" (or the '
              'GPUs it requests).',
    '--num-epochs': None, '--kv-store': None, '--kvstore': None,
}
_ENV_NOTES = {
    'DMLC_': 'is for MXNet\'s parameter servers and was dropped: the operator gives neomx its place '
             '(RANK, WORLD_SIZE, MASTER_*/PET_*)',
    'PS_': 'configures ps-lite, which neomx does not use; dropped',
}


def _replicas(spec):
    return int(spec.get('replicas', 1))


def _main_container(pod_spec, default_name):
    containers = pod_spec.get('containers') or []
    if not containers:
        raise MXNetError('MXJob: the Worker template has no container')
    for container in containers:
        if container.get('name') == default_name:
            return container
    return containers[0]


def _command_notes(argv):
    notes = []
    for i, word in enumerate(argv):
        flag, _, inline = word.partition('=')
        value = inline or (argv[i + 1] if i + 1 < len(argv) else '')
        if flag in ('--kv-store', '--kvstore') and value in _KVSTORE_NOTES:
            notes.append('%s %s' % (flag, _KVSTORE_NOTES[value]))
        elif _FLAG_NOTES.get(flag):
            notes.append(_FLAG_NOTES[flag])
    return notes


def _neomx_command(container, launcher):
    """The worker's command run with neomx: ``launcher -m neomx.compat SCRIPT ARGS``."""
    argv = list(container.get('command') or []) + list(container.get('args') or [])
    if not argv:
        return None, ['The Worker runs its image\'s entrypoint: make sure it starts Python with '
                      '"python -m neomx.compat" (or imports neomx).']
    program = os.path.basename(argv[0])
    if not program.startswith('python'):
        return argv, ['The Worker\'s command (%s) is not a Python call and is kept as is: make sure '
                      'it runs its script with "python -m neomx.compat".' % argv[0]]
    rest = argv[1:]
    if rest[:2] == _COMPAT:
        rest = rest[2:]
    return launcher + _COMPAT + rest, _command_notes(rest)


def _kept_env(container, notes):
    kept = []
    for var in container.get('env') or []:
        prefix = next((p for p in _ENV_NOTES if var.get('name', '').startswith(p)), None)
        if prefix is None:
            kept.append(var)
        else:
            notes.append('env %s %s.' % (var['name'], _ENV_NOTES[prefix]))
    return kept


def _dropped_replica_notes(specs):
    notes = []
    roles = {'Scheduler': 'its rendezvous role is taken by torch\'s (the master / c10d store)',
             'Server': 'neomx has no parameter servers: the workers all-reduce their gradients'}
    for role, why in roles.items():
        if role in specs:
            spec = specs[role]
            containers = spec.get('template', {}).get('spec', {}).get('containers') or [{}]
            resources = containers[0].get('resources')
            notes.append('%s (%d replica%s) dropped: %s%s.' % (
                role, _replicas(spec), '' if _replicas(spec) == 1 else 's', why,
                '; its resources %s are no longer needed' % _flow(resources) if resources else ''))
    return notes


def _flow(value):
    """A one-line rendering of a small mapping for comments."""
    if isinstance(value, dict):
        return '{%s}' % ', '.join('%s: %s' % (k, _flow(v)) for k, v in value.items())
    return str(value)


def _metadata(mxjob):
    meta = mxjob.get('metadata') or {}
    return {k: copy.deepcopy(meta[k]) for k in ('name', 'namespace', 'labels', 'annotations') if k in meta}


def _to_trainjob(mxjob, worker, container, image, notes):
    pod_spec = worker['template'].get('spec', {})
    command, command_notes = _neomx_command(container, ['torchrun'])
    notes += command_notes
    trainer = {'image': image or container.get('image'), 'numNodes': _replicas(worker), 'numProcPerNode': 1}
    if command:
        trainer['command'] = command
    env = _kept_env(container, notes)
    if env:
        trainer['env'] = env
    if container.get('resources'):
        trainer['resourcesPerNode'] = copy.deepcopy(container['resources'])
    spec = {'runtimeRef': {'name': _TRAINJOB_RUNTIME}, 'trainer': trainer}
    override = {'targetJobs': [{'name': _TRAINJOB_JOB}]}
    if pod_spec.get('volumes'):
        override['volumes'] = copy.deepcopy(pod_spec['volumes'])
    if container.get('volumeMounts'):
        override['containers'] = [{'name': _TRAINJOB_CONTAINER, 'volumeMounts': copy.deepcopy(container['volumeMounts'])}]
    for field in _OVERRIDABLE:
        if field in pod_spec:
            override[field] = copy.deepcopy(pod_spec[field])
    if len(override) > 1:
        spec['podSpecOverrides'] = [override]
    dropped = sorted(set(pod_spec) - set(_OVERRIDABLE) - {'containers', 'volumes', 'restartPolicy'})
    if dropped:
        notes.append('Pod spec fields a TrainJob cannot carry were dropped: %s.' % ', '.join(dropped))
    notes.append('Each node runs torchrun, which reads PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR and '
                 'PET_MASTER_PORT from the torch-distributed runtime.')
    return {'apiVersion': 'trainer.kubeflow.org/v1alpha1', 'kind': 'TrainJob', 'metadata': _metadata(mxjob),
            'spec': spec}


def _to_pytorchjob(mxjob, worker, container, image, notes):
    template = copy.deepcopy(worker['template'])
    pod_container = _main_container(template.setdefault('spec', {}), container.get('name'))
    python = (container.get('command') or ['python'])[0]
    command, command_notes = _neomx_command(container, [python])
    notes += command_notes
    pod_container['name'] = _PYTORCH_CONTAINER
    if image:
        pod_container['image'] = image
    pod_container.pop('args', None)
    if command:
        pod_container['command'] = command
    env = _kept_env(container, notes)
    pod_container.pop('env', None)
    if env:
        pod_container['env'] = env
    pod_container['ports'] = [dict(_PYTORCH_PORT)] + [
        p for p in pod_container.get('ports') or [] if p.get('name') not in ('mxjob-port', _PYTORCH_PORT['name'])]
    count = _replicas(worker)
    policy = worker.get('restartPolicy', 'Never')
    replica_specs = {'Master': {'replicas': 1, 'restartPolicy': policy, 'template': template}}
    if count > 1:
        replica_specs['Worker'] = {'replicas': count - 1, 'restartPolicy': policy,
                                   'template': copy.deepcopy(template)}
    notes.append('The %d worker(s) become a Master and %d Worker(s): the operator gives each pod '
                 'MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (the master is rank 0).' % (count, count - 1))
    return {'apiVersion': 'kubeflow.org/v1', 'kind': 'PyTorchJob', 'metadata': _metadata(mxjob),
            'spec': {'pytorchReplicaSpecs': replica_specs}}


def convert(mxjob, to='trainjob', image=None):
    """Convert the MXJob object ``mxjob`` (a dict) into a TrainJob or PyTorchJob.

    Returns
    -------
    (dict, list of str)
        The new object and the notes that explain what changed.
    """
    if mxjob.get('kind') != 'MXJob':
        raise MXNetError('--from-mxjob expects kind: MXJob, got %r' % mxjob.get('kind'))
    spec = mxjob.get('spec') or {}
    mode = spec.get('jobMode', 'MXTrain')
    if mode != 'MXTrain':
        raise MXNetError('MXJob jobMode %s (TVM auto-tuning) has no neomx equivalent; only MXTrain '
                         'jobs convert' % mode)
    specs = spec.get('mxReplicaSpecs') or {}
    unknown = sorted(set(specs) - {'Scheduler', 'Server', 'Worker', 'TunerTracker', 'TunerServer', 'Tuner'})
    if 'Worker' not in specs or unknown:
        raise MXNetError('MXJob: mxReplicaSpecs needs a Worker (and only Scheduler/Server besides), got %s'
                         % sorted(specs))
    worker = copy.deepcopy(specs['Worker'])
    container = _main_container(worker.setdefault('template', {}).setdefault('spec', {}), 'mxnet')
    notes = ['Converted from MXJob %s by "python -m neomx.launch --from-mxjob" for neomx.'
             % (mxjob.get('metadata') or {}).get('name', '')]
    if not image:
        notes.append('Image %s kept: it must have neomx installed (or pass --image, e.g. the one '
                     'built from deploy/Dockerfile).' % container.get('image'))
    notes += _dropped_replica_notes(specs)
    if to == 'trainjob':
        job = _to_trainjob(mxjob, worker, container, image, notes)
    elif to == 'pytorchjob':
        job = _to_pytorchjob(mxjob, worker, container, image, notes)
    else:
        raise MXNetError('--to must be trainjob or pytorchjob, got %r' % to)
    if spec.get('runPolicy'):
        if to == 'pytorchjob':
            job['spec']['runPolicy'] = copy.deepcopy(spec['runPolicy'])
        else:
            notes.append('runPolicy dropped: a TrainJob has none (the runtime sets the failure policy).')
    return job, notes


def main(argv=None):
    """``python -m neomx.launch --from-mxjob FILE [--to trainjob|pytorchjob] [--image I] [-o OUT]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog='python -m neomx.launch --from-mxjob',
                                     description='Convert an MXJob into a TrainJob or PyTorchJob running neomx.')
    parser.add_argument('mxjob', nargs='?', help='the MXJob YAML file')
    parser.add_argument('--from-mxjob', dest='from_mxjob', metavar='FILE', help='the MXJob YAML file')
    parser.add_argument('--to', choices=['trainjob', 'pytorchjob'], default=None)
    parser.add_argument('--image', help='container image with neomx (default: the MXJob\'s)')
    parser.add_argument('-o', '--output', help='write here (default: standard output)')
    args, _ = parser.parse_known_args(argv)       # the launcher's other options are not ours
    source = args.from_mxjob or args.mxjob
    if not source:
        parser.error('the MXJob file is required (--from-mxjob FILE)')
    job, notes = convert(load_manifest(source), args.to or 'trainjob', args.image)
    text = dump_manifest(job, notes)
    if args.output:
        from .._fileio import write_atomic
        write_atomic(args.output, [text.encode('utf-8')])
    else:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
