"""MXNet's ``tools/launch.py`` on torchrun's machinery.

    python -m neomx.launch -n 2 --launcher local python train.py --kvstore dist_sync
    python -m neomx.launch -n 4 -H hosts python train.py --kvstore dist_sync

``local`` starts the workers on this host under one torch elastic agent; ``ssh`` starts one
agent per host of the hostfile. Every worker gets torchrun's variables (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``) and MXNet's
``DMLC_ROLE``/``DMLC_NUM_WORKER``/``DMLC_NUM_SERVER``, which ``mx.kv.create('dist_*')`` reads.
"""
from .cli import launch, main
from .options import parse_args

__all__ = ['main', 'launch', 'parse_args']
