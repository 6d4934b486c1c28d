"""The launcher's command line: MXNet's ``tools/launch.py`` flags plus torchrun's elastic ones.

MXNet's flags keep their names and meanings (``-n``, ``-s``, ``-H``, ``--launcher``,
``--env``, ``--env-worker``, ``--env-server``, ``--sync-dst-dir``); ``--max-restarts``,
``--rdzv-timeout``, ``--nnodes``, ``--node-rank`` and ``--rdzv-endpoint`` come from torchrun.
"""
import argparse
import os

from ..base import MXNetError

__all__ = ['parse_args', 'parse_env_pairs', 'read_hostfile', 'LAUNCHERS']

LAUNCHERS = ('local', 'ssh', 'mpi', 'sge', 'yarn')
DEFAULT_PORT = 29500


def _parser():
    p = argparse.ArgumentParser(
        prog='python -m neomx.launch',
        description='Launch a distributed job: N worker processes on this host (local) or '
                    'spread over the hosts of a hostfile (ssh), on torchrun\'s machinery.')
    p.add_argument('-n', '--num-workers', type=int, help='number of worker processes in all')
    p.add_argument('-s', '--num-servers', type=int,
                   help='number of servers; neomx keeps the stores inside the workers (dist_async: '
                        'one server shard per worker), so no server process is started: S is only '
                        'passed to the workers as DMLC_NUM_SERVER (default: N)')
    p.add_argument('-H', '--hostfile', help='file of the hosts to run on, one "host[:ssh-port]" a line')
    p.add_argument('--sync-dst-dir', help='ssh launcher: copy the current directory (rsync) to '
                                          'this directory of every host and run there')
    p.add_argument('--launcher', choices=LAUNCHERS,
                   help='local: every worker on this host; ssh: one elastic agent per host of the '
                        'hostfile (default: ssh with -H, local without)')
    p.add_argument('--env', action='append', default=[], metavar='NAME[:VALUE]',
                   help='set NAME to VALUE for every process (NAME alone passes this shell\'s value on)')
    p.add_argument('--env-worker', action='append', default=[], metavar='NAME:VALUE',
                   help='set NAME to VALUE for the workers')
    p.add_argument('--env-server', action='append', default=[], metavar='NAME:VALUE',
                   help='accepted for MXNet\'s scripts; there are no server processes to apply it to')
    p.add_argument('--p3', action='store_true', help='accepted for MXNet\'s scripts; no effect')
    p.add_argument('--max-restarts', type=int, default=0, metavar='K',
                   help='restart every worker up to K times after one fails (torchrun\'s elastic '
                        'restarts; the script resumes from its own checkpoints)')
    p.add_argument('--rdzv-timeout', type=float, default=300, metavar='SECONDS',
                   help='seconds to wait for every host to arrive at the rendezvous (default 300)')
    p.add_argument('--nnodes', type=int, default=1, metavar='H',
                   help='hosts taking part, each running this launcher with --node-rank')
    p.add_argument('--node-rank', type=int, default=0, metavar='I', help='this host\'s index among --nnodes')
    p.add_argument('--rdzv-endpoint', default='', metavar='HOST:PORT',
                   help='HOST:PORT of the rendezvous, on the first host (default 127.0.0.1 and a '
                        'free port for one host, the first host and %d for several)' % DEFAULT_PORT)
    p.add_argument('--rdzv-id', default='', metavar='NAME',
                   help='name of the job at the rendezvous, the same on every host (default: '
                        'random for one host, "neomx" for several; the ssh launcher picks one)')
    p.add_argument('--from-mxjob', metavar='FILE', help='convert a Kubeflow MXJob manifest')
    p.add_argument('--to', choices=('trainjob', 'pytorchjob'), help='target kind of --from-mxjob')
    p.add_argument('--image', help='--from-mxjob: container image with neomx (default: the MXJob\'s)')
    p.add_argument('-o', '--output', help='--from-mxjob: write the manifest here (default: standard output)')
    p.add_argument('command', nargs=argparse.REMAINDER, help='the command each worker runs')
    return p


def parse_args(argv=None):
    """Parse the launcher's arguments; ``command`` is the worker command as a list.

    Example:

    >>> a = parse_args(['-n', '2', '--launcher', 'local', 'python', 'train.py', '--lr', '0.1'])
    >>> a.num_workers, a.num_servers, a.launcher, a.command
    (2, 2, 'local', ['python', 'train.py', '--lr', '0.1'])
    """
    p = _parser()
    args = p.parse_args(argv)
    if args.command and args.command[0] == '--':
        args.command = args.command[1:]
    if args.from_mxjob:
        return args
    if args.num_workers is None:
        p.error('the following arguments are required: -n/--num-workers')
    if not args.command:
        p.error('the following arguments are required: command')
    if args.num_workers < 1:
        p.error('-n/--num-workers must be at least 1, got %d' % args.num_workers)
    if args.num_servers is None:
        args.num_servers = args.num_workers
    if args.launcher is None:
        args.launcher = 'ssh' if args.hostfile else 'local'
    if args.max_restarts < 0:
        p.error('--max-restarts must be >= 0, got %d' % args.max_restarts)
    if args.rdzv_timeout <= 0:
        p.error('--rdzv-timeout must be positive, got %g' % args.rdzv_timeout)
    if not 0 <= args.node_rank < args.nnodes:
        p.error('--node-rank %d is not in [0, --nnodes %d)' % (args.node_rank, args.nnodes))
    return args


def parse_env_pairs(pairs, environ=os.environ):
    """``['NAME:VALUE', 'NAME']`` -> dict; a bare NAME takes its value from ``environ``."""
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition(':')
        if not name or (not sep and name not in environ):
            raise MXNetError('launch: --env %r: expected NAME:VALUE, or the NAME of a variable set '
                             'in this shell' % pair)
        env[name] = value if sep else environ[name]
    return env


def read_hostfile(path):
    """[(host, ssh_port)] of a hostfile: one ``host`` or ``host:port`` a line, as MXNet's."""
    hosts = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise MXNetError('launch: cannot read hostfile %r: %s' % (path, e.strerror)) from None
    for number, line in enumerate(lines, 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        host, _, port = line.partition(':')
        if not host or (port and not port.isdigit()):
            raise MXNetError('launch: hostfile %r line %d: expected host or host:port, got %r'
                             % (path, number, line))
        hosts.append((host, int(port or 22)))
    if not hosts:
        raise MXNetError('launch: hostfile %r lists no host' % path)
    return hosts
