"""``mx.lr_scheduler``: learning-rate schedules."""
