"""Row_sparse pushes and pulls between worker processes (dist_async): only the rows involved
travel and change. The worker (tests/dist_workers/sparse_async.py) asserts the values."""
from test_dist_kvstore import _all_ok, _workers


def test_dist_async_row_sparse_push_and_pull_move_only_their_rows(tmp_path):
    _all_ok(_workers(tmp_path, 'sparse_async.py', 2), 'sparse')
