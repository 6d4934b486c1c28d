"""``mx.profiler``: MXNet's profiler API on top of ``torch.profiler``.

While the profiler runs (``set_state('run')`` and not paused), a ``torch.profiler`` session
records every torch operator neomx executes, and the calls of ``mx.nd`` operators and of
NDArray arithmetic are ranges named as MXNet names its operators (``dot``, ``_plus_scalar``;
see :mod:`neomx.ndarray.profiled`): the statistics count those, not the torch operators
inside them (``aten::mm``...). Torch calls outside such ranges (compiled graphs of
hybridized blocks and executors) keep torch's names. Python custom operators appear in
MXNet's ``Custom Operator`` category (``MyOp::pure_python``, ``MyOp::_zeros``). User
annotations (``Task``, ``Frame``, ``Event``, ``Counter``, ``Marker``) are timed by this module on the same wall
clock as torch's events, so each keeps its domain as its category and may overlap others
freely (a torch ``record_function`` range must close in LIFO order). Nothing is hooked into
neomx's operators while the profiler is off: the cost is then zero.

``dump()`` writes everything recorded to ``filename`` as a Chrome trace (open it in
chrome://tracing or https://ui.perfetto.dev), and ``dumps()`` returns aggregate statistics
per category (count, total, min, max, average in ms) when ``aggregate_stats`` is on.

Differences from MXNet: ``profile_symbolic`` and ``profile_imperative`` both mean "record
operators" (neomx runs graphs as the same torch calls), ``profile_api`` has nothing to
profile (no C API), ``continuous_dump``/``dump_period`` are accepted but the file is only
written by ``dump()`` and, as MXNet does, once more at interpreter exit when the profiler ran
since the last final dump, and server-side (``profile_process='server'``) profiling is refused:
neomx has no distributed KVStore.
"""
import atexit
import json
import threading
import time
import warnings

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity

from . import _op_profile, upper_layers
from .base import KVStoreHandle, MXNetError, atomic_write

# The KVStore whose servers MXNet's profiler commands (profile_process='server') go to; a
# KVStore sets it (MXNet does so on creating a distributed store). An empty handle: none.
profiler_kvstore_handle = KVStoreHandle()


def set_kvstore_handle(handle):
    """Set the KVStore (its handle) that server-side profiler commands are sent through.

    Example
    -------
    >>> previous = mx.profiler.profiler_kvstore_handle
    >>> mx.profiler.set_kvstore_handle(mx.base.KVStoreHandle(1))
    >>> mx.profiler.profiler_kvstore_handle.value
    1
    >>> mx.profiler.set_kvstore_handle(previous)
    """
    global profiler_kvstore_handle      # pylint: disable=global-statement
    profiler_kvstore_handle = handle

__all__ = ['set_kvstore_handle', 'profiler_kvstore_handle', 'set_config', 'set_state', 'pause', 'resume', 'dump', 'dumps', 'dump_profile',
           'profiler_set_config', 'profiler_set_state', 'Domain', 'Task', 'Frame', 'Event',
           'Counter', 'Marker']

# names MXNet's module also holds (imported from its base module)
from .base import c_str, c_str_array, check_call, py_str  # noqa: E402,F401


# ---------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------

_TRUE_WORDS = ('1', 'true')
_FALSE_WORDS = ('0', 'false')


def _parse_bool(key, value):
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS + _FALSE_WORDS:
            return word in _TRUE_WORDS
    elif isinstance(value, (bool, int)):
        return bool(value)
    raise MXNetError("Invalid Parameter format for %s expect boolean but value='%s'" % (key, value))


def _parse_float(key, value):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MXNetError("Invalid Parameter format for %s expect float but value='%s'" % (key, value)) from None


def _parse_filename(key, value):
    return str(value)


_PROCESSES = ('server', 'worker')


def _parse_process(key, value):
    if value not in _PROCESSES:
        raise MXNetError("Invalid Input: '%s', valid values are: {'server', 'worker'}" % (value,))
    _check_worker(value)
    return value


# name -> (parser, default, description), in MXNet's order; the descriptions are listed
# in the error for an unknown name, as MXNet does.
_OPTIONS = {
    'profile_all': (_parse_bool, False, 'Profile all: operators and memory.'),
    'profile_symbolic': (_parse_bool, True, 'Profile operators run by graphs (executors, hybridized blocks).'),
    'profile_imperative': (_parse_bool, True, 'Profile operators run imperatively (mx.nd).'),
    'profile_memory': (_parse_bool, True, 'Profile memory allocated by operators.'),
    'profile_api': (_parse_bool, True, 'Profile the C API: accepted, neomx has none.'),
    'filename': (_parse_filename, 'profile.json', 'File the trace is written to by dump().'),
    'continuous_dump': (_parse_bool, True, 'Accepted; neomx writes the file only in dump().'),
    'dump_period': (_parse_float, 1.0, 'Accepted; see continuous_dump.'),
    'aggregate_stats': (_parse_bool, False, 'Maintain aggregate statistics for dumps().'),
    'profile_process': (_parse_process, 'worker', "Process to profile: only 'worker' is supported."),
}


def _unknown_option_error(key):
    listing = '\n'.join('%s : default=%r\n    %s' % (name, default, doc)
                        for name, (_, default, doc) in _OPTIONS.items())
    return MXNetError("Cannot find argument '%s', Possible Arguments:\n----------------\n%s" % (key, listing))


def _check_worker(profile_process):
    """Only the worker can be profiled: neomx has no KVStore server processes."""
    if profile_process == 'server':
        raise MXNetError("profile_process='server' needs a distributed KVStore server; neomx runs none")


def _check_process(profile_process):
    """KeyError for an unknown process name (as MXNet), MXNetError for 'server'."""
    if profile_process not in _PROCESSES:
        raise KeyError(profile_process)
    _check_worker(profile_process)


# ---------------------------------------------------------------------------------------
# Aggregate statistics
# ---------------------------------------------------------------------------------------

_SORT_KEYS = ('total', 'avg', 'min', 'max', 'count')
_FORMATS = ('table', 'json')
_MEMORY_CATEGORY = 'Device Storage'
_CUSTOM_CATEGORY = 'Custom Operator'      # MXNet's category of Python custom operators
_NAME_WIDTH, _COUNT_WIDTH, _VALUE_WIDTH = 30, 11, 17
# (column title, _Stat field) of the dumps() tables, as MXNet titles them
_TIME_COLUMNS = (('Time (ms)', 'total'), ('Min Time (ms)', 'min'), ('Max Time (ms)', 'max'),
                 ('Avg Time (ms)', 'avg'))
_MEMORY_COLUMNS = (('Min Use  (kB)', 'min'), ('Max Use  (kB)', 'max'), ('Avg Use  (kB)', 'avg'))


class _Stat:
    """Count, total, min and max of one named quantity (ms for times, kB for memory)."""
    __slots__ = ('count', 'total', 'min', 'max')

    def __init__(self):
        self.count, self.total, self.min, self.max = 0, 0.0, float('inf'), float('-inf')

    def add(self, value):
        self.count += 1
        self.total += value
        self.min = min(self.min, value)
        self.max = max(self.max, value)

    @property
    def avg(self):
        return self.total / self.count


class _AggregateStats:
    """Per category, per name statistics of times and memory, rendered as MXNet's dumps()."""

    def __init__(self):
        self.categories = {}        # category -> {name -> _Stat}

    def add(self, category, name, value):
        entries = self.categories.setdefault(category, {})
        stat = entries.get(name)
        if stat is None:
            stat = entries[name] = _Stat()
        stat.add(value)

    @staticmethod
    def _sorted(entries, sort_by, ascending):
        return sorted(entries.items(), key=lambda item: getattr(item[1], sort_by), reverse=not ascending)

    def table(self, sort_by, ascending):
        lines = ['', 'Profile Statistics:', '\tNote the difference in units for different entries.']
        for category in sorted(self.categories):
            columns = _MEMORY_COLUMNS if category == _MEMORY_CATEGORY else _TIME_COLUMNS
            titles = [title for title, _ in columns]
            lines += [category, '=================', self._row('Name', 'Total Count', titles),
                      self._row('----', '-----------', ['-' * len(t) for t in titles])]
            lines += [self._row(name, str(stat.count), ['%.4f' % getattr(stat, field) for _, field in columns])
                      for name, stat in self._sorted(self.categories[category], sort_by, ascending)]
            lines.append('')
        return '\n'.join(lines) + '\n'

    @staticmethod
    def _row(name, count, cells):
        return (name.ljust(_NAME_WIDTH) + count.rjust(_COUNT_WIDTH)
                + ''.join(c.rjust(_VALUE_WIDTH) for c in cells))

    def json(self, sort_by, ascending):
        times, memory = {}, {}
        for category, entries in self.categories.items():
            is_memory = category == _MEMORY_CATEGORY
            (memory if is_memory else times)[category] = {
                name: self._summary(stat, with_total=not is_memory)
                for name, stat in self._sorted(entries, sort_by, ascending)}
        report = {'Time': times, 'Memory': memory, 'Unit': {'Time': 'ms', 'Memory': 'kB'}}
        return json.dumps(report, indent=4)

    @staticmethod
    def _summary(stat, with_total):
        summary = {'Count': stat.count}
        if with_total:
            summary['Total'] = round(stat.total, 4)
        summary.update(Min=round(stat.min, 4), Max=round(stat.max, 4), Avg=round(stat.avg, 4))
        return summary


# ---------------------------------------------------------------------------------------
# The profiler state
# ---------------------------------------------------------------------------------------

_NS_PER_MS, _NS_PER_US = 1e6, 1e3
_DEVICE_LANES = {DeviceType.CPU: 'cpu'}
_TORCH_MEMORY_EVENT = '[memory]'


class _Profiler:
    """The process-wide profiler: configuration, torch session, trace and statistics.

    The trace is a list of Chrome trace events; each "lane" (a process row in the viewer:
    ``cpu/0``, ``gpu/0``, one per annotation category) gets a pid on first use.
    """

    def __init__(self):
        self.lock = threading.RLock()
        self.config = {name: default for name, (_, default, _) in _OPTIONS.items()}
        self.running = False
        self.paused = False
        self.session = None         # the torch.profiler.profile recording now, if any
        self.has_output = False     # something to dump: the profiler ran since the last final dump
        self.trace = []
        self.lanes = {}             # lane name -> pid
        self.stats = None           # _AggregateStats once aggregate_stats was turned on

    @property
    def recording(self):
        return self.running and not self.paused

    def configure(self, options):
        parsed = {}
        for key, value in options.items():
            if key not in _OPTIONS:
                raise _unknown_option_error(key)
            parsed[key] = _OPTIONS[key][0](key, value)
        with self.lock:
            self.config.update(parsed)
            if self.config['aggregate_stats'] and self.stats is None:
                self.stats = _AggregateStats()
            if self.session is not None:        # new operator/memory options apply from now on
                self._stop_session()
                self._start_session()

    def set_running(self, running):
        with self.lock:
            if running and not self.running:
                self.running, self.paused, self.has_output = True, False, True
                self._start_session()
            elif not running and self.running:
                self._stop_session()
                self.running = False

    def set_paused(self, paused):
        with self.lock:
            if not self.running or paused == self.paused:
                return
            self.paused = paused
            if paused:
                self._stop_session()
            else:
                self._start_session()

    # -- torch sessions --------------------------------------------------------------

    def _records_operators(self):
        c = self.config
        return c['profile_all'] or c['profile_symbolic'] or c['profile_imperative']

    def _start_session(self):
        if not self._records_operators():
            return
        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        memory = self.config['profile_all'] or self.config['profile_memory']
        self.session = torch.profiler.profile(activities=activities, profile_memory=memory)
        self.session.start()
        upper_layers.get('profile_operator_names')(True)

    def _stop_session(self):
        """Stop the torch session and move its events into the trace and statistics."""
        session, self.session = self.session, None
        if session is None:
            return
        upper_layers.get('profile_operator_names')(False)
        session.stop()
        start_ns = session.profiler.kineto_results.trace_start_ns()
        for event in session.events():
            if event.name != _TORCH_MEMORY_EVENT:     # allocations are counted with their operator
                self._add_torch_event(event, start_ns)

    def _add_torch_event(self, event, trace_start_ns):
        device = _DEVICE_LANES.get(event.device_type, 'gpu')
        lane = '%s/%d' % (device, 0 if device == 'cpu' else event.device_index)
        begin_ns = trace_start_ns + event.time_range.start * _NS_PER_US
        end_ns = trace_start_ns + event.time_range.end * _NS_PER_US
        name = event.name
        if event.is_user_annotation and name.startswith(_op_profile.PREFIX):
            # an MXNet operator's range (see neomx._op_profile): its torch calls are inside it
            name = name[len(_op_profile.PREFIX):]
            category = _CUSTOM_CATEGORY if '::' in name else 'operator'
            self.trace.append(self._complete_event(lane, category, name, begin_ns, end_ns, event.thread))
            self._add_stat(category, name, (end_ns - begin_ns) / _NS_PER_MS)
            return
        category = ('user_annotation' if event.is_user_annotation
                    else 'operator' if device == 'cpu' else 'kernel')
        self.trace.append(self._complete_event(lane, category, name, begin_ns, end_ns, event.thread))
        if category == 'operator' and not _inside_operator(event, mxnet_ranges=False):
            # Nested aten calls are part of their caller's time: count each call once; torch
            # calls outside MXNet operators' ranges (graph code) keep torch's names.
            if not _inside_operator(event):
                self._add_stat('operator', event.name, (end_ns - begin_ns) / _NS_PER_MS)
            if event.cpu_memory_usage > 0 and (self.config['profile_memory'] or self.config['profile_all']):
                self._add_stat(_MEMORY_CATEGORY, 'Memory: cpu/0', event.cpu_memory_usage / 1024.0)

    # -- recording -------------------------------------------------------------------

    def _pid(self, lane):
        pid = self.lanes.get(lane)
        if pid is None:
            pid = self.lanes[lane] = len(self.lanes)
        return pid

    def _complete_event(self, lane, category, name, begin_ns, end_ns, tid):
        return {'name': name, 'cat': category, 'ph': 'X', 'ts': begin_ns / _NS_PER_US,
                'dur': (end_ns - begin_ns) / _NS_PER_US, 'pid': self._pid(lane), 'tid': tid}

    def _add_stat(self, category, name, value):
        if self.stats is not None and self.config['aggregate_stats']:
            self.stats.add(category, name, value)

    def add_range(self, category, name, begin_ns, end_ns):
        """Record a user annotation that started at ``begin_ns`` and ends now."""
        with self.lock:
            self.trace.append(self._complete_event(category, category, name, begin_ns, end_ns,
                                                   threading.get_native_id()))
            self._add_stat(category, name, (end_ns - begin_ns) / _NS_PER_MS)

    def add_instant(self, category, name, scope):
        with self.lock:
            self.trace.append({'name': name, 'cat': category, 'ph': 'i', 'ts': time.time_ns() / _NS_PER_US,
                               's': scope, 'pid': self._pid(category), 'tid': threading.get_native_id()})

    def add_counter(self, category, name, value):
        with self.lock:
            self.trace.append({'name': name, 'cat': category, 'ph': 'C', 'ts': time.time_ns() / _NS_PER_US,
                               'args': {name: value}, 'pid': self._pid(category)})

    # -- output ----------------------------------------------------------------------

    def dump(self, finished):
        with self.lock:
            if not self.has_output:
                raise MXNetError("Profiler hasn't been run. Config and start profiler first")
            if self.session is not None:        # include what the running session has so far
                self._stop_session()
                self._start_session()
            atomic_write(self.config['filename'], [json.dumps(self._chrome_trace()).encode()])
            if finished:
                self.set_running(False)
                self.has_output = False
                self.trace, self.lanes = [], {}

    def dump_at_exit(self):
        """The final dump MXNet makes at exit, if something was recorded and not yet dumped."""
        with self.lock:
            if not self.has_output:
                return
            try:
                self.dump(True)
            except OSError as err:      # at exit there is no caller left to raise to
                warnings.warn('mx.profiler: could not write %r at exit: %s' % (self.config['filename'], err))

    def _chrome_trace(self):
        names = [{'name': 'process_name', 'ph': 'M', 'pid': pid, 'args': {'name': lane}}
                 for lane, pid in self.lanes.items()]
        return {'traceEvents': names + self.trace, 'displayTimeUnit': 'ms'}

    def dumps(self, reset, format, sort_by, ascending):   # pylint: disable=redefined-builtin
        with self.lock:
            if self.session is not None:
                self._stop_session()
                self._start_session()
            if self.stats is None:
                return ''
            text = (self.stats.table if format == 'table' else self.stats.json)(sort_by, ascending)
            if reset:
                self.stats = _AggregateStats()
            return text


def _inside_operator(event, mxnet_ranges=True):
    """Whether a torch operator event runs inside another operator: a torch one, or (with
    ``mxnet_ranges``) an MXNet one's range; other annotations do not count."""
    parent = event.cpu_parent
    while parent is not None:
        if not parent.is_user_annotation or (mxnet_ranges and parent.name.startswith(_op_profile.PREFIX)):
            return True
        parent = parent.cpu_parent
    return False


_PROFILER = _Profiler()


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------

def set_config(**kwargs):
    """Configure the profiler (keyword arguments only).

    Parameters
    ----------
    filename : str, default 'profile.json'
        File ``dump()`` writes the Chrome trace to.
    profile_all : bool, default False
        Record operators and memory, whatever the other switches say.
    profile_symbolic, profile_imperative : bool, default True
        Record operators (either switch turns operator recording on).
    profile_memory : bool, default True
        Record the memory each operator allocates (aggregate statistics).
    profile_api : bool, default True
        Accepted for compatibility; neomx has no C API to profile.
    continuous_dump : bool, default True
        Accepted for compatibility; the file is written by ``dump()`` only.
    dump_period : float, default 1.0
        Accepted for compatibility.
    aggregate_stats : bool, default False
        Maintain the statistics ``dumps()`` returns.
    profile_process : {'worker', 'server'}, default 'worker'
        Only 'worker' is supported.

    Raises
    ------
    MXNetError
        For an unknown option or a value of the wrong kind.
    """
    _PROFILER.configure(kwargs)


_STATES = {'stop': False, 'run': True}


def set_state(state='stop', profile_process='worker'):
    """Start (``'run'``) or stop (``'stop'``) the profiler.

    Raises
    ------
    KeyError
        For an unknown state or process name, as MXNet.
    """
    running = _STATES[state]
    _check_process(profile_process)
    if running:
        _register_exit_dump()
    _PROFILER.set_running(running)


_EXIT_DUMP = []     # [True] once the exit hook is registered


def _register_exit_dump():
    """MXNet writes what was recorded and never dumped when the process ends (scripts that only
    call ``set_state('run')`` / ``set_state('stop')`` still get their file): one hook, registered
    the first time the profiler runs, dumps the profiler current at exit."""
    if not _EXIT_DUMP:
        _EXIT_DUMP.append(True)
        atexit.register(lambda: _PROFILER.dump_at_exit())


def pause(profile_process='worker'):
    """Pause recording (nothing happens unless the profiler runs)."""
    _check_process(profile_process)
    _PROFILER.set_paused(True)


def resume(profile_process='worker'):
    """Resume a paused recording."""
    _check_process(profile_process)
    _PROFILER.set_paused(False)


def dump(finished=True, profile_process='worker'):
    """Write everything recorded so far to the configured file as a Chrome trace.

    Parameters
    ----------
    finished : bool, default True
        Stop the profiler after this dump and forget what it recorded; a later dump needs a
        new ``set_state('run')``. With False, recording goes on and later dumps rewrite the
        file with everything recorded.
    profile_process : {'worker'}
        Only the worker can be profiled.

    Raises
    ------
    MXNetError
        When the profiler has not run since the last final dump.
    """
    _check_process(profile_process)
    _PROFILER.dump(bool(finished))


def dumps(reset=False, format='table', sort_by='total', ascending=False):  # pylint: disable=redefined-builtin
    """Aggregate statistics per category as text ('' unless ``aggregate_stats`` was set).

    Parameters
    ----------
    reset : bool, default False
        Clear the statistics after returning them.
    format : {'table', 'json'}
        A text table, or JSON: ``{"Time": {category: {name: {"Count", "Total", "Min",
        "Max", "Avg"}}}, "Memory": {...}, "Unit": {"Time": "ms", "Memory": "kB"}}``.
    sort_by : {'total', 'avg', 'min', 'max', 'count'}
        Order of the entries within each category.
    ascending : bool, default False
        Sort order.
    """
    assert format in _FORMATS, "Invalid value provided for format: %s. Support: 'table', 'json'" % format
    assert sort_by in _SORT_KEYS, ("Invalid value provided for sort_by: %s. Support: 'total', 'avg', "
                                   "'min', 'max', 'count'" % sort_by)
    return _PROFILER.dumps(bool(reset), format, sort_by, bool(ascending))


def dump_profile():
    """Deprecated spelling of ``dump()``."""
    warnings.warn('profiler.dump_profile() is deprecated. Please use profiler.dump() instead')
    dump(True)


_MODES = {'symbolic': False, 'all': True}


def profiler_set_config(mode='symbolic', filename='profile.json'):
    """Deprecated: ``mode`` 'symbolic' records operators, 'all' also memory."""
    warnings.warn('profiler.profiler_set_config() is deprecated. Please use profiler.set_config() instead')
    set_config(profile_all=_MODES[mode], filename=filename)


def profiler_set_state(state='stop'):
    """Deprecated spelling of ``set_state(state)``."""
    warnings.warn('profiler.profiler_set_state() is deprecated. Please use profiler.set_state() instead')
    set_state(state)


# ---------------------------------------------------------------------------------------
# User annotations
# ---------------------------------------------------------------------------------------

class Domain:
    """A named group of annotations; its name is their category in traces and statistics.

    Parameters
    ----------
    name : str
        Name of the domain.

    Example
    -------
    >>> domain = mx.profiler.Domain('data')
    >>> str(domain), str(domain.new_task('decode')), str(domain.new_counter('queued', 5))
    ('data', 'decode', 'queued')

    The annotations are recorded (in the trace written by :func:`dump`, and in
    :func:`dumps`'s statistics) only between ``set_state('run')`` and ``set_state('stop')``.
    """

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError('profiler domain name must be a string, got %s' % type(name).__name__)
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A :class:`Task` of this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A :class:`Frame` of this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A :class:`Counter` of this domain, starting at ``value``."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A :class:`Marker` of this domain."""
        return Marker(self, name)


class _Range:
    """A named time range between ``start()`` and ``stop()``, recorded in ``category``.

    A range is recorded when the profiler runs (unpaused) at both ends; ``stop()`` without
    ``start()`` does nothing, and a second ``start()`` restarts the range.
    """

    def __init__(self, category, name):
        self.name = name
        self._category = category
        self._start_ns = None

    def __str__(self):
        return self.name

    def start(self):
        """Start timing."""
        self._start_ns = time.time_ns() if _PROFILER.recording else None

    def stop(self):
        """Stop timing and record the range."""
        start_ns, self._start_ns = self._start_ns, None
        if start_ns is not None and _PROFILER.recording:
            _PROFILER.add_range(self._category, self.name, start_ns, time.time_ns())


class Task(_Range):
    """A logical unit of work; all its runs are aggregated under its domain.

    Parameters
    ----------
    domain : Domain
        Domain of the task (its category).
    name : str
        Name of the task.

    Example
    -------
    >>> task = mx.profiler.Task(mx.profiler.Domain('data'), 'decode')
    >>> task.start()
    >>> _ = sum(range(100))                 # the work timed, while the profiler runs
    >>> task.stop()
    >>> str(task)
    'decode'
    """

    def __init__(self, domain, name):
        super().__init__(domain.name, name)
        self.domain = domain


class Frame(_Range):
    """A frame (one iteration of a repeated region), in category ``'<domain>,frame'``.

    Parameters
    ----------
    domain : Domain
        Domain of the frame.
    name : str
        Name of the frame.

    Example
    -------
    >>> frame = mx.profiler.Domain('train').new_frame('iteration')
    >>> for step in range(2):
    ...     frame.start()
    ...     _ = sum(range(100))
    ...     frame.stop()
    >>> str(frame)
    'iteration'
    """

    def __init__(self, domain, name):
        super().__init__(domain.name + ',frame', name)
        self.domain = domain


class Event(_Range):
    """A demarcated region of code without a domain, in category ``'event'``.

    Parameters
    ----------
    name : str
        Name of the event.

    Example
    -------
    >>> event = mx.profiler.Event('load_batch')
    >>> event.start()
    >>> _ = sum(range(100))
    >>> event.stop()
    >>> str(event)
    'load_batch'
    """

    def __init__(self, name):
        super().__init__('event', name)


class Counter:
    """A value tracked over time; each change is a counter sample in the trace.

    Parameters
    ----------
    domain : Domain
        Domain of the counter.
    name : str
        Name of the counter.
    value : int, optional
        Initial value.

    Example
    -------
    >>> counter = mx.profiler.Counter(mx.profiler.Domain('data'), 'queued', 10)
    >>> counter += 5
    >>> counter -= 3
    >>> counter.decrement()
    >>> str(counter)                        # each change is a sample in the trace
    'queued'
    """

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def __str__(self):
        return self.name

    def set_value(self, value):
        """Set the value."""
        self.value = value
        if _PROFILER.recording:
            _PROFILER.add_counter(self.domain.name, self.name, value)

    def increment(self, delta=1):
        """Add ``delta`` to the value."""
        self.set_value(self.value + delta)

    def decrement(self, delta=1):
        """Subtract ``delta`` from the value."""
        self.set_value(self.value - delta)

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self


# MXNet's marker scopes -> Chrome trace instant-event scopes (g: global, p: process, t: thread).
_MARKER_SCOPES = {'global': 'g', 'process': 'p', 'thread': 't', 'task': 't', 'marker': 't'}


class Marker:
    """An instant in time, shown as an instant event in category ``'<domain>,instant_marker'``.

    Parameters
    ----------
    domain : Domain
        Domain of the marker.
    name : str
        Name of the marker.

    Example
    -------
    >>> marker = mx.profiler.Domain('train').new_marker('epoch_end')
    >>> marker.mark('process')
    >>> marker.mark('galaxy')
    Traceback (most recent call last):
    ...
    neomx.base.MXNetError: Invalid Input: 'galaxy', valid values are: {'global', 'marker', ...}
    """

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name

    def mark(self, scope='process'):
        """Record the marker now.

        Parameters
        ----------
        scope : {'global', 'process', 'thread', 'task', 'marker'}
            What the marker refers to.
        """
        chrome_scope = _MARKER_SCOPES.get(scope)
        if chrome_scope is None:
            raise MXNetError("Invalid Input: '%s', valid values are: {'global', 'marker', 'process', "
                             "'task', 'thread'}" % (scope,))
        if _PROFILER.recording:
            _PROFILER.add_instant(self.domain.name + ',instant_marker', self.name, chrome_scope)
