"""``python -m neomx.launch`` / ``neomx-launch``: pick the launcher and run it."""
import sys

from ..base import MXNetError
from . import mxjob
from .local import run_local, worker_counts
from .options import parse_args, parse_env_pairs, read_hostfile
from .ssh import run_ssh

__all__ = ['main']

_UNSUPPORTED = ('mpi', 'sge', 'yarn')


def launch(args):
    """Run the job described by parsed ``args``; return the exit code."""
    if args.launcher in _UNSUPPORTED:
        raise MXNetError('launch: --launcher %s is not supported by neomx; use local or ssh, or start '
                         '"python -m neomx.launch --launcher local --nnodes H --node-rank I '
                         '--rdzv-endpoint HOST:PORT" on each host from your scheduler' % args.launcher)
    if args.launcher == 'ssh':
        if not args.hostfile:
            raise MXNetError('launch: the ssh launcher needs -H HOSTFILE (or use --launcher local)')
        return run_ssh(args, read_hostfile(args.hostfile))
    env = parse_env_pairs(args.env)
    env.update(parse_env_pairs(args.env_worker))
    local_workers = worker_counts(args.num_workers, args.nnodes)[args.node_rank]
    return run_local(args, local_workers, env)


def main(argv=None):
    """Entry point of ``python -m neomx.launch`` and the ``neomx-launch`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    if args.from_mxjob:
        return mxjob.main(argv)
    try:
        return launch(args)
    except MXNetError as e:
        print('neomx.%s' % e, file=sys.stderr)
        return 2
