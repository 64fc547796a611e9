"""nn.Module calls and ATen operators as NVTX ranges, installed when the program imports torch.

Ranges (domain "torch"; names are what ceiling's C++ side reads, agent/run/torch_run.cpp):

    MobileNetV2 (model)                      an outermost module call: the model
    MobileNetV2 (model, uninstrumented)      the same, run without per-op instrumentation
    features.3.conv.1 (Conv2d)               a module inside it, by its qualified name
    aten.convolution [conv depthwise] {...}  an operator with its declared work (formulas.py)
    Resize (transform)                       an outermost module that is pre-processing
    backward (model step)                    torch.autograd.backward
    SGD.step (model step)                    an optimizer's step

torch's own profiler markers (record_function: "Optimizer.step#AdamW.step", DataLoader's
batches) reach the dispatch mode as profiler:: ops; they do no work and get no range, so
they are never listed as regions of their own.

Operators come from ceiling's op observer (observer.cpp, a RecordFunction callback in C++)
where it is built for this torch, and otherwise from a TorchDispatchMode
(torch.utils._python_dispatch): both see each ATen call below autograd, after composite
ops (linear, conv2d) have been decomposed, with its real tensors; the observer calls back
here (_describe_observed) only for a call whose key it has not seen. Both are per thread:
attached or entered on the importing thread and on every thread that calls a module. Module calls come from replacing
nn.Module.__call__ rather than the global forward hooks: a hook pair leaves its range open
when forward raises, and cannot run a forward with the mode switched off.

Instrumentation cost, measured in the same run: the model's calls alternate, first
instrumented (so a single forward is seen op by op), then uninstrumented, instrumented, ...
An uninstrumented call pops the dispatch mode (or switches the thread's observer callback
off) and opens no range but its own, so ceiling
compares the two kinds' durations and the sum of the op ranges inside instrumented ones.
"""
import atexit
import functools
import importlib
import os
import sys
import threading
import weakref

import torch
from torch.utils._python_dispatch import (TorchDispatchMode, _get_current_dispatch_mode,
                                          _pop_mode_temporarily)

from . import formulas, nvtx

# Outermost module calls from these packages pre-process the model's input (torchvision's
# transforms are nn.Modules): they are ranges, never the model.
NOT_MODEL_PACKAGES = ("torchvision.transforms",)


class _State:
    """One thread's state. Plain slots behind one thread-local read: each attribute read of a
    threading.local looks the thread's dict up again (100 ns against 11 on a slot), and a
    module call read five of them."""
    __slots__ = ("stack", "root", "mode_on", "step_open", "steps", "compiled_grad")

    def __init__(self):
        self.stack = []       # class names of the open module calls on this thread
        self.root = None      # the _Root of the outermost open call
        self.mode_on = False  # the dispatch mode is pushed on this thread
        self.step_open = False  # an optimizer step's range, opened by its pre-hook, is open
        self.steps = 0  # open backward and optimizer step ranges (model ranges, no module)
        self.compiled_grad = False  # compiled code ran with grad since the last backward


class _Thread(threading.local):
    def __init__(self):
        super().__init__()
        self.state = _State()


_thread = _Thread()


class _Root:
    """An outermost module: its range names and its submodules' qualified names."""
    __slots__ = ("message", "quiet_message", "names", "calls", "model", "cls")

    def __init__(self, module, label, model):
        kind = "model" if model else "transform"
        self.message = f"{label} ({kind})".encode()
        self.quiet_message = f"{label} (model, uninstrumented)".encode()
        self.model = model
        self.calls = 0
        self.cls = type(module).__name__.encode()
        # id -> (module, message, class name): modules stay alive while their root does; the
        # module is kept beside its id so that a recycled id never names another module.
        self.names = {id(m): (m, f"{name} ({type(m).__name__})".encode(), type(m).__name__.encode())
                      for name, m in module.named_modules() if m is not module}


_roots = weakref.WeakKeyDictionary()
_labels = {}  # class name -> outermost modules of that class seen so far


def _root_of(module):
    root = _roots.get(module)
    if root is None:
        cls = type(getattr(module, "_orig_mod", module) if _compiled(module) else module)
        label = cls.__name__
        n = _labels[label] = _labels.get(label, 0) + 1
        if n > 1:  # two ResNets in one program are two models
            label = f"{label}#{n}"
        model = not cls.__module__.startswith(NOT_MODEL_PACKAGES)
        root = _roots[module] = _Root(module, label, model)
    return root


_Tensor = torch.Tensor


def _key_of(a):
    """What a formula reads of an argument: a tensor's shape and dtype (never its values),
    a list's items, anything else as it is."""
    if isinstance(a, _Tensor):
        return (a.shape, a.dtype)
    if isinstance(a, (list, tuple)):
        return tuple([_key_of(x) for x in a])
    return a


# A call's range message by what its formula reads (the op, its enclosing module's class, its
# arguments' shapes, dtypes and other values): a model's calls repeat the same ops on the same
# shapes, so the formula runs once per distinct call, not per call (issue: the formulas were
# most of the per-op cost). Bounded: a program whose shapes never repeat clears it.
_messages = {}
MESSAGES_MAX = 200_000


def _describe(func, entry, args, kwargs, module_class, key):
    """The message of a call not seen before (its formula run), kept under its key."""
    try:
        message = formulas.describe(func, entry, args, kwargs, module_class).encode()
    except Exception:  # an argument no formula foresaw: listed, never guessed
        message = f"{formulas.op_name(func)} [no formula]".encode()
    if key is not None:
        if len(_messages) >= MESSAGES_MAX:
            _messages.clear()
        _messages[key] = message
    return message


class _OpMode(TorchDispatchMode):
    # torch 2.x wraps a mode's __torch_dispatch__ in torch._disable_dynamo (a frame and a
    # context switch per op: half a microsecond); nothing here is ever compiled, and compiled
    # code runs with this mode set aside (_run_compiled), so the wrapper buys nothing.
    @classmethod
    def _should_skip_dynamo(cls):
        return False

    # The body for ctypes' face; the extension module's runs the same in C (below _mode).
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        known = _entries.get(id(func))
        if known is None:
            known = _entries[id(func)] = _entry(func)
        _, entry, call, marker = known
        if marker:
            return call(*args, **kwargs) if kwargs else call(*args)
        stack = _thread.state.stack
        module_class = stack[-1] if stack else None
        # The message looked up here, not in a function of its own (a Python call less per
        # op); tensors inline (most arguments). The op by its id: an OpOverload hashes in
        # Python (a call per hash), and _entries keeps every op seen alive, so no id is reused.
        key = (id(func), module_class,
               tuple([(a.shape, a.dtype) if isinstance(a, _Tensor) else _key_of(a) for a in args]),
               tuple([(k, _key_of(v)) for k, v in kwargs.items()]) if kwargs else None)
        try:
            message = _messages.get(key)
        except TypeError:  # an argument that cannot be a key (unhashable): described afresh
            key = message = None
        if message is None:
            message = _describe(func, entry, args, kwargs or {}, module_class, key)
        nvtx.push(message)
        try:
            # No keywords as none at all: an op's pybind11 entry takes 0.1-0.5 us longer
            # over an empty dict, which torch passes for most ops (2.14).
            return call(*args, **kwargs) if kwargs else call(*args)
        finally:
            nvtx.pop()


def _entry(func):
    """What the mode keeps of an op: the op itself (alive, so that its id stays its own), its
    formula entry (formulas.lookup), how to call it (_direct), whether it is a profiler
    marker (no work, no range)."""
    entry = formulas.lookup(func)
    return func, entry, _direct(func), entry[3] == formulas.PROFILER_MARKER


def _direct(func):
    """The op's C++ entry where calling it is all the op's Python __call__ does (an op
    without a Python-side dispatcher): a Python frame less per op, 0.2 us of ~3 on 2.14."""
    op = getattr(func, "_op", None)
    if op is None or getattr(func, "_pyobj_dispatcher", None) is not None:
        return func
    return op


# Per op, by its id: _entry's tuple.
_entries = {}
_mode = _OpMode()
if nvtx.native is not None:
    # The same body in C (torch_nvtx.cpp, py_dispatch), reading these same tables and calling
    # back here for an op or a key seen the first time: 0.2-0.5 us less per op than the
    # Python body above, of its 1.6-2.5 us (relu, addmm alone, interleaved medians; one AVX2
    # EPYC VM, torch 2.14 and 1.13). torch calls a mode's __torch_dispatch__ only where its
    # __self__ is the mode: bound to this instance.
    nvtx.native.configure(_entries, _messages, _thread, _entry, _describe, _Tensor, nvtx)
    _mode.__torch_dispatch__ = nvtx.native.bind(_mode)
_original_call = torch.nn.Module.__call__


def _enter_mode():
    _thread.state.mode_on = True
    if _observer is not None:
        _observer.attach()
    else:
        _mode.__enter__()


def _set_quiet(on):
    """Inside an uninstrumented call (or compiled code): no op ranges on this thread."""
    nvtx.tls.quiet = on
    if _observer is not None:
        _observer.quiet(on)


# The op observer (observer.py): ops from a RecordFunction callback in C++ instead of the
# dispatch mode, where it is built for this torch; None otherwise, and _ops_by says why.
_observer = None
_ops_by = "the dispatch mode"
push_module = pop_module = None
_ops_by_name = {}  # (schema name, overload) -> OpOverload


def _describe_observed(name, overload, args, kwargs, module_class):
    """The observer's call for a key's first call: the message, or None for no range."""
    func = _ops_by_name.get((name, overload))
    if func is None:
        namespace, _, base = name.partition("::")
        func = getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")
        _ops_by_name[(name, overload)] = func
    known = _entries.get(id(func))
    if known is None:
        known = _entries[id(func)] = _entry(func)
    if known[3]:  # a profiler marker
        return None
    return _describe(func, known[1], args, kwargs, module_class, None)


def _start_observer():
    """Ops through the observer where it can be: not asked for the mode, the extension
    module loaded (the observer records through it), the observer built for this torch.
    Returns why not, or ''."""
    global _observer, _ops_by, push_module, pop_module
    if os.environ.get("CEILING_TORCH_OPS") == "mode":
        return "CEILING_TORCH_OPS=mode"
    if nvtx.native is None:
        return "no extension module (ranges through ctypes)"
    from . import observer
    module, why = observer.load()
    if module is None:
        return why
    module.start(nvtx.native.api, _describe_observed)
    atexit.register(module.stop)  # no callback may take the GIL once the interpreter is gone
    push_module, pop_module = nvtx.native.push_module, nvtx.native.pop_module
    _observer, _ops_by = module, "ceiling's op observer"
    return ""


def _call(self, *args, **kwargs):
    t = _thread.state
    if nvtx.tls.quiet:
        if _compiled(self) and torch.is_grad_enabled():  # its backward runs compiled kernels
            t.compiled_grad = True
        return _original_call(self, *args, **kwargs)
    if not t.mode_on:
        _enter_mode()
    # The class's name first: a string compare where _compiled is a Python call per module.
    if type(self).__name__ == "OptimizedModule" and _compiled(self):
        return _compiled_module(self, args, kwargs, t)
    if t.root is None:
        return _outermost(self, args, kwargs, t)
    named = t.root.names.get(id(self))
    if _observer is not None:  # the module's class kept in C, where the observer reads it
        if named is None or named[0] is not self:
            named = (self, f"({type(self).__name__})".encode(), type(self).__name__.encode())
        push_module(named[1], named[2])
        try:
            return _original_call(self, *args, **kwargs)
        finally:
            pop_module()
    message = named[1] if named is not None and named[0] is self else f"({type(self).__name__})".encode()
    nvtx.push(message)
    t.stack.append(type(self).__name__)
    try:
        return _original_call(self, *args, **kwargs)
    finally:
        t.stack.pop()
        nvtx.pop()


def _outermost(module, args, kwargs, t):
    root = _root_of(module)
    call = root.calls
    root.calls += 1
    # Every second call of a model after its first runs bare, when the mode on top of the
    # stack is ours (a program's own mode stays untouched).
    if root.model and call % 2 == 1 and (_observer is not None or _get_current_dispatch_mode() is _mode):
        nvtx.push(root.quiet_message)
        _set_quiet(True)
        try:
            if _observer is not None:
                return _original_call(module, *args, **kwargs)
            with _pop_mode_temporarily():
                return _original_call(module, *args, **kwargs)
        finally:
            _set_quiet(False)
            nvtx.pop()
    if _observer is not None:
        push_module(root.message, root.cls)
        t.root = root
        try:
            return _original_call(module, *args, **kwargs)
        finally:
            t.root = None
            pop_module()
    nvtx.push(root.message)
    t.root = root
    t.stack.append(type(module).__name__)
    try:
        return _original_call(module, *args, **kwargs)
    finally:
        t.stack.pop()
        t.root = None
        nvtx.pop()


def _model_step(function, message, backward=False):
    """A training step's backward pass and optimizer step are the model's work too; their ops
    run outside any module call. Never run uninstrumented: they change the model's state.
    A backward through compiled code runs its compiled backward kernels: as compiled code's
    forward, it runs bare, its work unknown (_run_compiled)."""
    def step(*args, **kwargs):
        t = _thread.state
        if nvtx.tls.quiet:
            return function(*args, **kwargs)
        if not t.mode_on:
            _enter_mode()
        nvtx.push(message)
        t.steps += 1
        try:
            if backward and t.compiled_grad:
                t.compiled_grad = False
                return _run_compiled(function, args, kwargs, COMPILED_BACKWARD)
            return function(*args, **kwargs)
        finally:
            t.steps -= 1
            nvtx.pop()
    step.ceiling_step = True
    return step


# torch.compile (2.x). Dynamo compiles no frame while a TorchDispatchMode is on the stack
# ("non-infra torch dispatch mode present", torch/_dynamo/convert_frame.py): under this
# mode a compiled model would run eagerly, op by op, a program other than the one measured.
# So compiled code runs as compiled, with the mode popped and no range inside but one op
# range without a formula that stands for its generated kernels, which no dispatch mode sees
# op by op: the model's work is then unknown, and said to be (never a silent 0).
COMPILED = b"torch.compile'd code (its generated kernels, not seen op by op) [no formula]"
COMPILED_BACKWARD = (b"backward of torch.compile'd code (its generated kernels, not seen op by op) "
                     b"[no formula]")


def _compiled(module):
    """torch.compile(module) returns an OptimizedModule wrapping the module (_orig_mod)."""
    cls = type(module)
    return cls.__name__ == "OptimizedModule" and cls.__module__.startswith("torch._dynamo")


def _run_compiled(function, args, kwargs, message=COMPILED):
    t = _thread.state
    if torch.is_grad_enabled():  # its backward will run compiled kernels too
        t.compiled_grad = True
    nvtx.push(message)
    _set_quiet(True)
    try:
        if _get_current_dispatch_mode() is _mode:
            with _pop_mode_temporarily():
                return function(*args, **kwargs)
        return function(*args, **kwargs)  # a program's own mode above ours: Dynamo skips anyway
    finally:
        _set_quiet(False)
        nvtx.pop()


def _compiled_module(module, args, kwargs, t):
    """A compiled module's call: inside a model, its compiled part; outermost, the model
    (named after the module compiled), every call run compiled (none alternates)."""
    if t.root is not None or t.steps:
        return _run_compiled(_original_call, (module,) + args, kwargs)
    root = _root_of(module)
    nvtx.push(root.message)
    t.root = root
    t.stack.append(type(module).__name__)
    try:
        return _run_compiled(_original_call, (module,) + args, kwargs)
    finally:
        t.stack.pop()
        t.root = None
        nvtx.pop()


def _compile_wrapper(compile_function):
    """torch.compile, whose compiled functions (not modules: _call sees those) run as
    compiled code: outside any model a model step of their own (a compiled training step is
    the model's), inside one its compiled part. nn.Module.compile() compiles through it too."""
    def wrap(compiled):
        if isinstance(compiled, torch.nn.Module) or not callable(compiled):
            return compiled
        message = f"{getattr(compiled, '__name__', 'compiled')} (model step)".encode()

        @functools.wraps(compiled)
        def call(*args, **kwargs):
            t = _thread.state
            if nvtx.tls.quiet:
                t.compiled_grad = t.compiled_grad or torch.is_grad_enabled()
                return compiled(*args, **kwargs)
            if t.root is not None or t.steps:
                return _run_compiled(compiled, args, kwargs)
            nvtx.push(message)
            try:
                return _run_compiled(compiled, args, kwargs)
            finally:
                nvtx.pop()
        return call

    @functools.wraps(compile_function)
    def patched_compile(model=None, *args, **kwargs):
        if model is None:  # torch.compile(mode=...) used as a decorator
            decorate = compile_function(None, *args, **kwargs)
            return lambda fn: wrap(decorate(fn))
        return wrap(compile_function(model, *args, **kwargs))
    return patched_compile


_original_hook_for_profile = getattr(torch.optim.Optimizer, "_hook_for_profile", None)


def _hook_for_profile(self):
    # torch 1.13 wraps each optimizer class's step once, when the first instance is made; so
    # do we.
    _original_hook_for_profile(self)
    cls = type(self)
    if not getattr(cls.step, "ceiling_step", False):
        hooked = getattr(cls.step, "hooked", None)
        cls.step = _model_step(cls.step, f"{cls.__name__}.step (model step)".encode())
        cls.step.hooked = hooked


_step_messages = {}  # optimizer class -> its step range's name


def _step_pre_hook(optimizer, _args, _kwargs):
    """torch 2.x's global optimizer pre-hook (register_optimizer_step_pre_hook): runs inside
    every optimizer's step, before it, so the range covers the step's ops."""
    t = _thread.state
    if nvtx.tls.quiet:
        return None
    if t.step_open:  # the previous step raised, so its post-hook never closed its range
        t.steps -= 1
        nvtx.pop()
    if not t.mode_on:
        _enter_mode()
    cls = type(optimizer)
    message = _step_messages.get(cls)
    if message is None:
        message = _step_messages[cls] = f"{cls.__name__}.step (model step)".encode()
    nvtx.push(message)
    t.step_open = True
    t.steps += 1
    return None


def _step_post_hook(_optimizer, _args, _kwargs):
    t = _thread.state
    if t.step_open:
        t.step_open = False
        t.steps -= 1
        nvtx.pop()


def _install_step_ranges():
    """Optimizer steps as model ranges: torch 2.x's public global step hooks where it has
    them (its Optimizer._hook_for_profile became _patch_step_function), torch 1.13's
    _hook_for_profile otherwise. Returns how, or None where this torch has neither."""
    try:
        optimizer = importlib.import_module("torch.optim.optimizer")
    except ImportError:
        optimizer = None
    pre = getattr(optimizer, "register_optimizer_step_pre_hook", None)
    post = getattr(optimizer, "register_optimizer_step_post_hook", None)
    if pre is not None and post is not None:
        pre(_step_pre_hook)
        post(_step_post_hook)
        return "global step hooks"
    if _original_hook_for_profile is not None:
        torch.optim.Optimizer._hook_for_profile = _hook_for_profile
        return "_hook_for_profile"
    return None


def install(torch_module=None):
    """Called once torch is imported (calls.when_imported)."""
    torch.nn.Module.__call__ = _call
    torch.autograd.backward = _model_step(torch.autograd.backward, b"backward (model step)", backward=True)
    if hasattr(torch, "compile"):  # torch 2.x
        torch.compile = _compile_wrapper(torch.compile)
    # A mark starting "torch " becomes a note of the run (agent/run/torch_run.cpp).
    notes = "" if _install_step_ranges() else (
        "; optimizer steps have no range (this torch has neither step hooks nor "
        "_hook_for_profile): their ops read as outside the model")
    why = _start_observer()
    if not why:
        notes += "; ops through ceiling's op observer"
    else:
        notes += (f"; ops through the dispatch mode ({why}), which costs each op a few us more "
                  "than ceiling's op observer (docs/pytorch.md)")
        if why.startswith("not built"):
            # After the run ceiling builds it for the next runs (agent/run/torch_run.cpp).
            nvtx.mark(f"observer to build: {sys.executable}".encode())
    if nvtx.via == "ctypes":
        notes += ("; its ranges go through ctypes, ~0.6 us more per range than through the "
                  "extension module (ceiling was built without Python's headers, python3-dev, "
                  "or this interpreter cannot load a CPython 3.8+ stable-ABI module)")
    _enter_mode()
    nvtx.mark(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads{notes}".encode())
