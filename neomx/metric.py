"""``mx.metric``: evaluation metrics."""
