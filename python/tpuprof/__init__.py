"""tpuprof — record what a Python program does (application activities, training or
inference steps, framework operators with their tensors, runtime calls, marks, ranges,
counters) with libtpuprof, and turn the capture into reports with the tpuprof converter.

    import tpuprof
    tpuprof.enable(mode=1)                  # or run with TPUPROF=1, no code change
    for i, batch in enumerate(loader):
        with tpuprof.step("train", i):
            with tpuprof.activity("preprocess", step=i):
                x = prepare(batch)
            y = model(x)
    tpuprof.finalize("profile")             # summary.json/md, ops.csv, result.html, traces,
                                            # timeline/ and step_stats/ per step

The recording calls cost one C call when capture is off, check their arguments always
(TypeError / ValueError, nothing recorded) and never raise because of the capture itself.
Everything libtpuprof guarantees holds: per-thread buffers, the dump survives a crash, a
forked child gets its own dump. PyTorch: tpuprof.torch. Reference: docs/python.md.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Dict, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

from . import _dtypes, _tpuprof
from ._report import ConversionError, ConverterNotFoundError, Report, convert, find_cli, finalize
from ._session import active, disable, enable, session_dir
from ._tpuprof import (
    MODE_CONDENSED,
    MODE_DETAILED,
    MODE_TIMING,
    BusyError,
    CaptureIOError,
    NotActiveError,
    Op,
    Scope,
    TpuprofError,
    activity,
    activity_begin,
    activity_end,
    async_begin,
    async_end,
    counter,
    flush,
    mark,
    meta,
    mode,
    op_begin,
    op_end,
    range,
    range_begin,
    range_end,
    runtime,
    runtime_begin,
    runtime_end,
    set_device,
    step,
    step_begin,
    step_end,
    thread_name,
)

__version__ = _tpuprof.version()

__all__ = [
    "MODE_CONDENSED", "MODE_DETAILED", "MODE_TIMING", "BusyError", "CaptureIOError",
    "ConversionError", "ConverterNotFoundError", "NotActiveError", "Op", "Profiler", "Report",
    "Scope", "Tensor", "TpuprofError", "activity", "activity_begin", "activity_end", "active",
    "async_begin", "async_end", "convert", "counter", "disable", "enable", "finalize",
    "find_cli", "flush", "mark", "meta", "mode", "op", "op_begin", "op_end", "range",
    "range_begin", "range_end", "runtime", "runtime_begin", "runtime_end", "session_dir",
    "set_device", "step", "step_begin", "step_end", "thread_name", "version",
]

F = TypeVar("F", bound=Callable[..., Any])


def version() -> str:
    """libtpuprof's version, e.g. "0.2.0"."""
    return _tpuprof.version()


class Tensor(NamedTuple):
    """A tensor described by hand, for operators whose data is not a numpy array or a torch
    tensor. nbytes None: elements x the dtype's size."""

    shape: Sequence[int]
    dtype: Optional[str] = None
    name: Optional[str] = None
    nbytes: Optional[int] = None


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, type)


def _tensors_in(x: Any) -> list:
    if _is_tensor(x):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if _is_tensor(t)]
    if isinstance(x, dict):
        return [t for t in x.values() if _is_tensor(t)]
    return []


def _wrap(scope: Scope, fn: F) -> F:
    """Scope.__call__: `fn` recorded as the scope on every call (operator scopes take their
    tensors from the arguments and the result in mode 2)."""
    desc = scope.op
    if desc is not None:
        return _op_wrapper(desc, fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with scope:
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _op_wrapper(desc: Op, fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _tpuprof.mode() != MODE_DETAILED:
            op_begin(desc)
            try:
                return fn(*args, **kwargs)
            finally:
                op_end(desc)
        ins = _tensors_in(args) + _tensors_in(kwargs)
        op_begin(desc)
        try:
            out = fn(*args, **kwargs)
        except BaseException:
            op_end(desc, inputs=ins)
            raise
        op_end(desc, inputs=ins, outputs=_tensors_in(out))
        return out

    return wrapper  # type: ignore[return-value]


_tpuprof._set_hooks(_dtypes.dtype_info, _wrap)

_ops: Dict[Tuple[str, Optional[str], Optional[str]], Op] = {}


def _op_desc(type: str, name: Optional[str], post_op: Optional[str]) -> Op:
    key = (type, name, post_op)
    desc = _ops.get(key)
    if desc is None:
        desc = _ops.setdefault(key, Op(type, name, post_op))
    return desc


def op(type: Union[str, Callable[..., Any]], name: Optional[str] = None, *,
       post_op: Optional[str] = None, inputs: Any = None, outputs: Any = None,
       attrs: Optional[Dict[str, Any]] = None, weight: Any = None,
       sparsity: Optional[float] = None, bytes: Optional[int] = None, flops: int = 0) -> Any:
    """An operator execution, as a with-statement scope or a decorator.

        with tpuprof.op("MatMul", "fc1", inputs=[x, w], attrs={"transpose_b": False}) as o:
            y = x @ w
            o.outputs = [y]

        @tpuprof.op                    # type = the function's name, name = module.qualname;
        def attention(q, k, v): ...    # mode 2: tensors from the arguments and the result

    Tensors: numpy arrays, torch tensors, tpuprof.Tensor, or a dict name -> tensor; their
    shape, dtype and byte size are recorded in mode 2 (bytes defaults to the sum of the
    inputs' and outputs' sizes). attrs: a dict recorded as text. Everything is checked here
    (TypeError / ValueError), so entering and leaving the scope records both sides."""
    if callable(type) and not isinstance(type, str):
        fn = type
        qual = f"{getattr(fn, '__module__', None) or ''}.{getattr(fn, '__qualname__', fn)}"
        return _op_wrapper(_op_desc(getattr(fn, "__name__", "op"), qual.lstrip("."), None), fn)
    desc = _op_desc(type, name, post_op)  # type: ignore[arg-type]
    return _tpuprof.op_scope(desc, inputs, outputs, attrs, weight, sparsity, bytes, flops)


class Profiler:
    """The Cambricon-style profiler object: one per process (Profiler() always returns the
    same one). It records into the process's capture session; start that with
    tpuprof.enable() or TPUPROF=1.

        p = tpuprof.Profiler()
        p.activity_start("Vgg Session Run", step, "meta text")
        ...
        p.activity_end("Vgg Session Run", step, "meta text")
        p.step_start("vgg16", step); ...; p.step_end("vgg16", step)
        p.finalize("profile")
    """

    _instance: Optional["Profiler"] = None

    def __new__(cls) -> "Profiler":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    activity_start = staticmethod(activity_begin)
    activity_end = staticmethod(activity_end)
    step_start = staticmethod(step_begin)
    step_end = staticmethod(step_end)
    activity = staticmethod(activity)
    step = staticmethod(step)

    @staticmethod
    def enable(max_records: int = 0, mode: int = 1) -> Any:
        """tpuprof.enable()."""
        return enable(max_records, mode)

    @property
    def mode(self) -> int:
        """The active session's mode, -1 when capture is off."""
        return _tpuprof.mode()

    def trace_level(self) -> int:
        """The TensorFlow RunOptions trace level matching the capture: 0 (NO_TRACE) when
        capture is off, 1 (SOFTWARE_TRACE) in modes 0 and 1, 3 (FULL_TRACE: with tensors) in
        mode 2."""
        m = _tpuprof.mode()
        return 0 if m < 0 else (3 if m == MODE_DETAILED else 1)

    get_tf_trace_level = trace_level

    def finalize(self, report_dir: Union[str, "os.PathLike[str]"] = "profile", **kwargs: Any
                 ) -> Report:
        """tpuprof.finalize(report_dir, ...): ends the session and writes every report."""
        return finalize(report_dir, **kwargs)
