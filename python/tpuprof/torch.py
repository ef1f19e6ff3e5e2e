"""tpuprof.torch — the framework layer of a PyTorch model in one call.

    import tpuprof, tpuprof.torch
    tpuprof.enable(mode=2)
    with tpuprof.torch.profile(model, optimizer) as prof:
        for i, (x, y) in enumerate(loader):
            with prof.step(i):                          # a step of graph "train"
                loss = loss_fn(model(x), y)
                optimizer.zero_grad(); loss.backward(); optimizer.step()
    tpuprof.finalize("profile")

What is recorded, on the thread that runs the model:
  * every aten operator (forward, backward and the optimizer's), through a TorchDispatchMode,
    as a tpuprof operator: type "aten::convolution", name "<module path>/aten::convolution"
    (the innermost module running, forward or backward; the bare type outside any module);
    in mode 2 with its tensors (shape, dtype, bytes) and its other arguments as attributes;
  * every module's forward as a range named by its path ("layer1.0.conv1", the model itself
    "<ClassName>"), category "module";
  * every module's backward as an async range "<path>.backward", category "module.backward",
    from the moment its output's gradient is ready to the moment its input's gradient is
    (or the end of the backward pass when its inputs need no gradient);
  * optimizer.step() and optimizer.zero_grad() as ranges "<Optimizer>.step" /
    "<Optimizer>.zero_grad", category "optimizer", their aten operators named after them.
Steps come from the training loop (prof.step(i), or tpuprof.step(graph, i)). Nothing is
recorded while capture is off (the hooks cost a check); stop() (or leaving the with block)
removes every hook. Needs torch >= 1.13 (torch.utils._python_dispatch.TorchDispatchMode).
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _tpuprof

_MODE_DETAILED = _tpuprof.MODE_DETAILED


def _tensors(x: Any, out: List[Any]) -> List[Any]:
    """Tensors in an argument or result (one level of lists / tuples)."""
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for t in x:
            if isinstance(t, torch.Tensor):
                out.append(t)
    return out


def _attr_value(v: Any) -> Optional[str]:
    if v is None or isinstance(v, (bool, int, float, str)):
        return None if v is None else str(v).lower() if isinstance(v, bool) else str(v)
    if isinstance(v, (list, tuple)) and all(isinstance(e, (bool, int, float)) for e in v):
        return "[" + ",".join(str(e) for e in v) + "]"
    if isinstance(v, (torch.dtype, torch.device, torch.memory_format, torch.layout)):
        return str(v)
    return None


class _OpMode(TorchDispatchMode):
    """Records each aten operator that reaches the Python dispatch key."""

    def __init__(self, prof: "Profile"):
        super().__init__()
        self.prof = prof

    def __torch_dispatch__(self, func: Any, types: Any, args: Tuple = (),
                           kwargs: Optional[Dict] = None) -> Any:
        kwargs = kwargs or {}
        mode = _tpuprof.mode()
        if mode < 0 or func.namespace == "profiler":
            return func(*args, **kwargs)
        desc = self.prof._op_desc(func)
        if mode != _MODE_DETAILED:
            _tpuprof.op_begin(desc)
            try:
                return func(*args, **kwargs)
            finally:
                _tpuprof.op_end(desc)
        ins: List[Any] = []
        attrs: Dict[str, str] = {}
        schema = func._schema.arguments
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                ins.append(a)
                continue
            if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
                _tensors(a, ins)
                continue
            v = _attr_value(a)
            if v is not None and i < len(schema):
                attrs[schema[i].name] = v
        for k, a in kwargs.items():
            if not _tensors(a, ins):
                v = _attr_value(a)
                if v is not None:
                    attrs[k] = v
        _tpuprof.op_begin(desc)
        try:
            out = func(*args, **kwargs)
        except BaseException:
            _tpuprof.op_end(desc, inputs=ins, attrs=attrs)
            raise
        _tpuprof.op_end(desc, inputs=ins, outputs=_tensors(out, []), attrs=attrs)
        return out


class _BackwardScope:
    """One module call's backward: an async range begun by its output's gradient hook and
    ended by its input's (depth: the module's nesting depth, to name operators after the
    innermost open one)."""

    __slots__ = ("name", "id", "depth", "begun", "ended")

    def __init__(self, name: str, ident: int, depth: int):
        self.name, self.id, self.depth = name, ident, depth
        self.begun = self.ended = False


class Profile:
    """The hooks of one profile() call; see the module's documentation."""

    def __init__(self, model: Optional[torch.nn.Module] = None, optimizer: Any = None, *,
                 graph: str = "train", modules: bool = True, ops: bool = True,
                 backward: bool = True):
        if model is not None and not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, not {type(model).__name__}")
        if optimizer is not None and not callable(getattr(optimizer, "step", None)):
            raise TypeError(f"optimizer must have a step() method, not {type(optimizer).__name__}")
        if not isinstance(graph, str) or not graph:
            raise ValueError("graph must be a non-empty str")
        self.model, self.optimizer, self.graph = model, optimizer, graph
        self.modules, self.ops, self.backward = modules, ops, backward
        self._tls = threading.local()
        self._descs: Dict[Tuple[str, Any], _tpuprof.Op] = {}
        self._handles: List[Any] = []
        self._mode: Optional[_OpMode] = None
        self._patched: List[Tuple[Any, str]] = []
        self._next_id = 0
        self._open: List[_BackwardScope] = []  # begun, not ended

    # ---- context: the innermost module (forward or backward) of this thread ----

    def _stack(self) -> List[str]:
        s = getattr(self._tls, "stack", None)
        if s is None:
            s = self._tls.stack = []
        return s

    def _scopes(self) -> List[Optional[_BackwardScope]]:
        """Per open module forward: the backward scope its hooks will begin and end."""
        s = getattr(self._tls, "scopes", None)
        if s is None:
            s = self._tls.scopes = []
        return s

    def _op_desc(self, func: Any) -> _tpuprof.Op:
        if self._open:  # in a backward pass: the deepest module whose backward runs
            where = max(reversed(self._open), key=lambda sc: sc.depth).name
        else:
            s = self._stack()
            where = s[-1] if s else ""
        key = (where, func)
        desc = self._descs.get(key)
        if desc is None:
            op_type = func._schema.name
            desc = self._descs[key] = _tpuprof.Op(op_type, f"{where}/{op_type}" if where
                                                   else op_type)
        return desc

    # ---- modules ----

    def _pre(self, name: str, depth: int):
        def hook(module: torch.nn.Module, inputs: Any) -> None:
            if _tpuprof.mode() < 0:
                return
            self._stack().append(name)
            sc = None
            if self.backward and torch.is_grad_enabled():
                self._next_id += 1
                sc = _BackwardScope(name + ".backward", self._next_id, depth)
                # Registered before the module runs, so an in-place module (ReLU(inplace=True))
                # still hooks the node that produced its input: the end of its backward.
                for t in _tensors(inputs, []):
                    if t.requires_grad and t.grad_fn is not None:  # never a leaf for good
                        t.register_hook(lambda g, sc=sc: self._bw_end(sc))
            self._scopes().append(sc)
            _tpuprof.range_begin(name, "module")
        return hook

    def _post(self, name: str):
        def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
            s = self._stack()
            if not s or s[-1] != name:
                return  # capture was switched on inside this module's forward
            _tpuprof.range_end(name)
            s.pop()
            sc = self._scopes().pop()
            if sc is None or not torch.is_grad_enabled():
                return
            outs = [t for t in _tensors(output, []) if t.requires_grad]
            if not outs:
                return
            t = outs[0]
            if t._backward_hooks is not None and any(t is i for i in _tensors(inputs, [])):
                # Modified in place: its hook dict belongs to the node before the module;
                # a fresh one attaches to the module's own node.
                t._backward_hooks = None
            t.register_hook(lambda g: self._bw_begin(sc))
        return hook

    def _bw_begin(self, sc: _BackwardScope) -> None:
        if sc.begun or _tpuprof.mode() < 0:
            return
        sc.begun = True
        if not self._open:
            # The first module of this backward pass: close what is still open at its end.
            torch.autograd.Variable._execution_engine.queue_callback(self._bw_finish)
        self._open.append(sc)
        _tpuprof.async_begin(sc.name, sc.id, "module.backward")

    def _bw_end(self, sc: _BackwardScope) -> None:
        if not sc.begun or sc.ended:
            return
        sc.ended = True
        _tpuprof.async_end(sc.name, sc.id)
        self._open.remove(sc)

    def _bw_finish(self) -> None:
        for sc in reversed(list(self._open)):
            self._bw_end(sc)

    # ---- optimizer ----

    def _wrap_method(self, obj: Any, attr: str, name: str) -> None:
        inner = getattr(obj, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _tpuprof.mode() < 0:
                return inner(*args, **kwargs)
            s = self._stack()
            s.append(name)
            _tpuprof.range_begin(name, "optimizer")
            try:
                return inner(*args, **kwargs)
            finally:
                _tpuprof.range_end(name)
                s.pop()

        setattr(obj, attr, wrapper)
        self._patched.append((obj, attr))

    # ---- life cycle ----

    def start(self) -> "Profile":
        """Installs the hooks (profile() calls it)."""
        if self.model is not None and self.modules:
            root = type(self.model).__name__
            for path, m in self.model.named_modules():
                name = path or root
                depth = path.count(".") + 1 if path else 0
                self._handles.append(m.register_forward_pre_hook(self._pre(name, depth)))
                self._handles.append(m.register_forward_hook(self._post(name)))
        if self.optimizer is not None:
            cls = type(self.optimizer).__name__
            self._wrap_method(self.optimizer, "step", f"{cls}.step")
            if callable(getattr(self.optimizer, "zero_grad", None)):
                self._wrap_method(self.optimizer, "zero_grad", f"{cls}.zero_grad")
        if self.ops:
            self._mode = _OpMode(self)
            self._mode.__enter__()
        return self

    def stop(self) -> None:
        """Removes every hook and ends the scopes a failed forward left open."""
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        for h in self._handles:
            h.remove()
        self._handles = []
        for obj, attr in reversed(self._patched):
            delattr(obj, attr)  # back to the class's method
        self._patched = []
        self._unwind()

    def _unwind(self) -> None:
        """Ends the module ranges an exception left open on this thread (innermost first)."""
        self._bw_finish()
        s = self._stack()
        while s:
            _tpuprof.range_end(s.pop())
        self._scopes().clear()

    def step(self, step: int, warmup: bool = False) -> Any:
        """A with-statement scope for step `step` of this profile's graph. An exception inside
        it ends the module ranges it left open before the step ends."""
        return _Step(self, _tpuprof.step(self.graph, step, warmup))

    def __enter__(self) -> "Profile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class _Step:
    __slots__ = ("prof", "scope")

    def __init__(self, prof: Profile, scope: Any):
        self.prof, self.scope = prof, scope

    def __enter__(self) -> "_Step":
        self.scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is not None:
            self.prof._unwind()
        self.scope.__exit__(*exc)


def profile(model: Optional[torch.nn.Module] = None, optimizer: Any = None, *,
            graph: str = "train", modules: bool = True, ops: bool = True,
            backward: bool = True) -> Profile:
    """Records `model`'s modules (forward and backward), every aten operator and
    `optimizer`'s step until stop() or the end of the with block; see the module's
    documentation. modules / ops / backward=False leave that part out."""
    return Profile(model, optimizer, graph=graph, modules=modules, ops=ops,
                   backward=backward).start()
