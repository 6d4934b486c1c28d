"""The MXNet kit runner gives each parallel test process at most its share of the cores."""
import importlib.util
import os

_SPEC = importlib.util.spec_from_file_location('mxnet_kit_script', os.path.join(os.path.dirname(__file__),
                                                                                'mxnet_kit.py'))
kit = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(kit)


def test_each_job_gets_its_share_of_the_cores():
    assert kit._threads_per_job(2, None, cores=2) == 1
    assert kit._threads_per_job(1, None, cores=8) == 8
    assert kit._threads_per_job(3, None, cores=2) == 1      # never 0


def test_a_requested_count_applies_only_below_the_share():
    assert kit._threads_per_job(2, '2', cores=2) == 1       # CI's OMP_NUM_THREADS=2 with --jobs 2
    assert kit._threads_per_job(1, '2', cores=8) == 2
    assert kit._threads_per_job(1, '0', cores=2) == 1
    assert kit._threads_per_job(2, '4,2', cores=4) == 2     # OpenMP's nested syntax: the share
