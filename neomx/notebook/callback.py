"""Training callbacks that record statistics in pandas DataFrames and draw live charts.

:class:`PandasLogger` keeps three DataFrames -- ``train`` (metrics every ``frequent``
batches, with speed and elapsed time), ``eval`` (validation metrics) and ``epoch`` (epoch
times) -- and gives ``fit`` its callbacks through :meth:`PandasLogger.callback_args`.
:class:`LiveLearningCurve` and :class:`LiveTimeSeries` draw with bokeh in a Jupyter
notebook. pandas and bokeh are the ``notebook`` extra (``pip install "neomx[notebook]"``),
imported when a class that needs one is created.
"""
import datetime
import time
from collections import defaultdict

from .._optional import require

__all__ = ['PandasLogger', 'LiveBokehChart', 'LiveTimeSeries', 'LiveLearningCurve', 'args_wrapper']


def _pandas(feature):
    return require('pandas', 'notebook', feature)


def _bokeh(feature):
    """(bokeh.io, bokeh.plotting)."""
    return require('bokeh.io', 'notebook', feature), require('bokeh.plotting', 'notebook', feature)


def _add_new_columns(dataframe, metrics):
    """Add a column (empty so far) to ``dataframe`` for each new key of ``metrics``."""
    for col in set(metrics.keys()) - set(dataframe.columns):
        dataframe[col] = None


def _extend(base, new):
    """Append to list ``base`` the items of ``new`` past its length."""
    base.extend(new[len(base):])


class PandasLogger:
    """Records a training run's statistics in pandas DataFrames: ``train``, ``eval`` and ``epoch``.

    Parameters
    ----------
    batch_size : int
        The training batch size (for the records-per-second figure).
    frequent : int
        Record the training metrics every ``frequent`` batches (they are reset then).

    Example (needs pandas: the ``notebook`` extra; tests/test_api_rest.py runs it)
    -------
    >>> logger = mx.notebook.callback.PandasLogger(batch_size=4, frequent=1)          # doctest: +SKIP
    >>> metric = mx.metric.Accuracy()
    >>> metric.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    >>> logger.train_cb(mx.model.BatchEndParam(epoch=0, nbatch=1, eval_metric=metric,
    ...                                        locals=None))                          # doctest: +SKIP
    >>> logger.train_df[['accuracy', 'minibatch_count', 'epoch']].values.tolist()     # doctest: +SKIP
    [[1.0, 1, 0]]
    """

    def __init__(self, batch_size, frequent=50):
        pd = _pandas('mx.notebook.callback.PandasLogger')
        self.batch_size = batch_size
        self.frequent = frequent
        self._dataframes = {'train': pd.DataFrame(), 'eval': pd.DataFrame(), 'epoch': pd.DataFrame()}
        self.last_time = time.time()
        self.start_time = datetime.datetime.now()
        self.last_epoch_time = datetime.datetime.now()

    @property
    def train_df(self):
        """Training metrics, one row every ``frequent`` batches."""
        return self._dataframes['train']

    @property
    def eval_df(self):
        """Validation metrics, one row per evaluation."""
        return self._dataframes['eval']

    @property
    def epoch_df(self):
        """Elapsed and epoch times, one row per epoch."""
        return self._dataframes['epoch']

    @property
    def all_dataframes(self):
        """``{'train': ..., 'eval': ..., 'epoch': ...}``."""
        return self._dataframes

    def elapsed(self):
        """Time since the logger was made (a ``datetime.timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def append_metrics(self, metrics, df_name):
        """Append the dict ``metrics`` as a row of DataFrame ``df_name`` (new keys become columns)."""
        dataframe = self._dataframes[df_name]
        _add_new_columns(dataframe, metrics)
        dataframe.loc[len(dataframe)] = metrics

    def train_cb(self, param):
        """``batch_end_callback``: record every ``frequent``-th batch."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, 'train')

    def eval_cb(self, param):
        """``eval_end_callback``: record the validation metrics."""
        self._process_batch(param, 'eval')

    def _process_batch(self, param, dataframe):
        now = time.time()
        if param.eval_metric is not None:
            metrics = dict(param.eval_metric.get_name_value())
            param.eval_metric.reset()
        else:
            metrics = {}
        try:
            speed = self.frequent / (now - self.last_time)
        except ZeroDivisionError:
            speed = float('inf')
        # (MXNet's two speed columns, with their names as MXNet has them)
        metrics['batches_per_sec'] = speed * self.batch_size
        metrics['records_per_sec'] = speed
        metrics['elapsed'] = self.elapsed()
        metrics['minibatch_count'] = param.nbatch
        metrics['epoch'] = param.epoch
        self.append_metrics(metrics, dataframe)
        self.last_time = now

    def epoch_cb(self, *args):
        """``epoch_end_callback``: record the elapsed and this epoch's time (arguments ignored)."""
        now = datetime.datetime.now()
        self.append_metrics({'elapsed': self.elapsed(), 'epoch_time': now - self.last_epoch_time}, 'epoch')
        self.last_epoch_time = now

    def callback_args(self):
        """The ``fit`` keyword arguments that install every callback of this logger."""
        return {'batch_end_callback': self.train_cb, 'eval_end_callback': self.eval_cb,
                'epoch_end_callback': self.epoch_cb}


class LiveBokehChart:
    """Base class of charts drawn with bokeh in a Jupyter notebook and updated during training.

    Subclasses define :meth:`setup_chart` (draw, return bokeh's notebook handle) and
    :meth:`update_chart_data`.

    Parameters
    ----------
    pandas_logger : PandasLogger, optional
        Collects the data (a new one is made from ``batch_size`` and ``frequent`` if None).
    metric_name : str
        The metric to draw.
    display_freq : float
        Seconds between redraws.
    """

    def __init__(self, pandas_logger, metric_name, display_freq=10, batch_size=None, frequent=50):
        self.pandas_logger = pandas_logger or PandasLogger(batch_size=batch_size, frequent=frequent)
        self.display_freq = display_freq
        self.last_update = time.time()
        self.metric_name = metric_name
        self._io, self._plotting = _bokeh('mx.notebook.callback.' + type(self).__name__)
        self._io.output_notebook()
        self.handle = self.setup_chart()

    def _figure(self, **params):
        plotting = self._plotting
        return getattr(plotting, 'Figure', plotting.figure)(x_axis_type='datetime', **params)

    def setup_chart(self):
        """Draw the chart; returns bokeh's notebook handle."""
        raise NotImplementedError('Incomplete base class: LiveBokehChart must be sub-classed')

    def update_chart_data(self):
        """Move the collected data into the chart's sources."""
        raise NotImplementedError('Incomplete base class: LiveBokehChart must be sub-classed')

    def interval_elapsed(self):
        """Whether ``display_freq`` seconds passed since the last redraw."""
        return time.time() - self.last_update > self.display_freq

    def _push_render(self):
        self._io.push_notebook(handle=self.handle)
        self.last_update = time.time()

    def _do_update(self):
        self.update_chart_data()
        self._push_render()

    def batch_cb(self, param):
        """``batch_end_callback``: redraw when ``display_freq`` seconds passed."""
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        """``eval_end_callback``: redraw."""
        self._do_update()

    def callback_args(self):
        """The ``fit`` keyword arguments that install this chart's callbacks."""
        return {'batch_end_callback': self.batch_cb, 'eval_end_callback': self.eval_cb}


class LiveTimeSeries(LiveBokehChart):
    """A line of values over elapsed time, extended by ``update_chart_data(value)``.

    ``fig_params`` go to bokeh's figure.
    """

    def __init__(self, **fig_params):
        self._fig_params = fig_params
        super().__init__(None, None)

    def setup_chart(self):
        self.fig = self._figure(x_axis_label='Elapsed time', **self._fig_params)
        self.start_time = datetime.datetime.now()
        self.x_axis_val = []
        self.y_axis_val = []
        self.fig.line(self.x_axis_val, self.y_axis_val)
        return self._plotting.show(self.fig, notebook_handle=True)

    def elapsed(self):
        """Time since the chart was drawn."""
        return datetime.datetime.now() - self.start_time

    def update_chart_data(self, value):
        self.x_axis_val.append(self.elapsed())
        self.y_axis_val.append(value)
        self._push_render()


class LiveLearningCurve(LiveBokehChart):
    """The training and validation values of ``metric_name`` over training time.

    Parameters
    ----------
    metric_name : str
    display_freq : float
        Seconds between redraws.
    frequent : int
        Record the training metric every ``frequent`` batches.
    """

    def __init__(self, metric_name, display_freq=10, frequent=50):
        self.frequent = frequent
        self.start_time = datetime.datetime.now()
        self._data = {'train': {'elapsed': []}, 'eval': {'elapsed': []}}
        super().__init__(None, metric_name, display_freq, frequent)

    def setup_chart(self):
        self.fig = self._figure(x_axis_label='Training time')
        self.x_axis_val1, self.y_axis_val1 = [], []
        self.train1 = self.fig.line(self.x_axis_val1, self.y_axis_val1, line_dash='dotted', alpha=0.3,
                                    legend_label='train')
        self.train2 = self.fig.circle(self.x_axis_val1, self.y_axis_val1, size=1.5, line_alpha=0.3,
                                      fill_alpha=0.3, legend_label='train')
        self.train2.visible = False     # shown once there are many points
        self.x_axis_val2, self.y_axis_val2 = [], []
        self.valid1 = self.fig.line(self.x_axis_val2, self.y_axis_val2, line_color='green', line_width=2,
                                    legend_label='validation')
        self.valid2 = self.fig.circle(self.x_axis_val2, self.y_axis_val2, line_color='green', line_width=2)
        self.fig.legend.location = 'bottom_right'
        self.fig.yaxis.axis_label = self.metric_name
        return self._plotting.show(self.fig, notebook_handle=True)

    def batch_cb(self, param):
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, 'train')
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        self._process_batch(param, 'eval')
        self._do_update()

    def _process_batch(self, param, df_name):
        if param.eval_metric is not None:
            metrics = dict(param.eval_metric.get_name_value())
            param.eval_metric.reset()
        else:
            metrics = {}
        metrics['elapsed'] = datetime.datetime.now() - self.start_time
        for key, value in metrics.items():
            self._data[df_name].setdefault(key, []).append(value)

    def update_chart_data(self):
        data = self._data['train']
        if data['elapsed']:
            _extend(self.x_axis_val1, data['elapsed'])
            _extend(self.y_axis_val1, data[self.metric_name])
        data = self._data['eval']
        if data['elapsed']:
            _extend(self.x_axis_val2, data['elapsed'])
            _extend(self.y_axis_val2, data[self.metric_name])
        if len(data) > 10:
            self.train1.visible = False
            self.train2.visible = True


def args_wrapper(*args):
    """The ``fit`` keyword arguments installing the callbacks of several callback objects
    (``PandasLogger``, ``LiveLearningCurve``...): each keyword gets the list of them.

    Example
    -------
    >>> class Recorder:
    ...     def callback_args(self):
    ...         return {'batch_end_callback': print}
    >>> mx.notebook.callback.args_wrapper(Recorder(), Recorder())
    {'batch_end_callback': [<built-in function print>, <built-in function print>]}
    """
    out = defaultdict(list)
    for callback in args:
        for key, value in callback.callback_args().items():
            out[key].append(value)
    return dict(out)
