"""core.py — Options, Model and Session: the Python face of the libmopt C API.

Ownership mirrors the C API. Each object owns one C handle, released by
close(), by leaving a `with` block, or (as a last resort) by the garbage
collector. A Session keeps its Model alive; closing a Model first closes the
sessions made from it, so a session is never left pointing at a freed model.

Copies (see README.md, "Copies"):
  - inputs: a C-contiguous, aligned, native-byte-order numpy array whose dtype
    is a libmopt dtype is handed to the library as is (mopt_tensor_wrap on the
    array's own buffer; the array is kept alive for the call). Anything else
    (a strided view, a Fortran-order or byte-swapped array) is first copied
    by numpy into a contiguous array. Non-array feeds (lists, scalars) are
    converted with np.asarray to the input's dtype. The dtype of an array is
    never changed silently: a wrong dtype raises mopt.DTypeError.
  - outputs: no copy either. By default the library allocates each output
    tensor and the returned numpy array views its buffer; the tensor is
    destroyed when the last array using it goes (array.base owns it). With
    Session.run_into / the IO binding (ort.py) the caller hands in its own
    numpy arrays and the library writes into them (mopt_tensor_wrap as the
    output tensor). Only bf16 outputs are widened (copied) to float32.
"""
import ctypes
import os
import threading
from collections import Counter
from collections.abc import Mapping
from typing import NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _capi, errors
from ._capi import load as _load

_addressof = ctypes.addressof
_char_from_buffer = ctypes.c_char.from_buffer

_lib, library_path = _load()

MOPT_INPUT = 0
MOPT_OUTPUT = 1

# mopt_dtype -> numpy dtype (STRING and BF16 have no plain numpy counterpart).
_NP_BY_MOPT = {
    1: np.dtype(np.float32), 2: np.dtype(np.uint8), 3: np.dtype(np.int8),
    4: np.dtype(np.uint16), 5: np.dtype(np.int16), 6: np.dtype(np.int32),
    7: np.dtype(np.int64), 9: np.dtype(np.bool_), 10: np.dtype(np.float16),
    11: np.dtype(np.float64), 12: np.dtype(np.uint32), 13: np.dtype(np.uint64),
}
_MOPT_BY_NP = {v: k for k, v in _NP_BY_MOPT.items()}
_DTYPE_BF16 = 16

_STAT_KEYS = ("runs", "peak_bytes", "arena_bytes", "last_run_ns", "inplace_outputs")
# mopt_info values 0.. in order (include/mopt/mopt.h)
_INFO_FIELDS = ("producer_name", "producer_version", "domain", "doc_string", "graph_name",
                "graph_doc_string")


def _str(b):
    return None if b is None else b.decode("utf-8", "replace")


def _raise(status, context=None):
    msg = _str(_lib.mopt_last_error()) or ""
    if context:
        msg = "%s: %s" % (context, msg) if msg else context
    raise errors.error_class(status)(msg, status, _str(_lib.mopt_status_string(status)))


def _check(status, context=None):
    if status != errors.OK:
        _raise(status, context)


def version():
    """The library's version string, e.g. "0.1.0"."""
    return _str(_lib.mopt_version())


def version_number():
    """The library's MOPT_VERSION_NUMBER (MAJOR * 10000 + MINOR * 100 + PATCH)."""
    return int(_lib.mopt_version_number())


def supported_ops():
    """Names of the operators this build of libmopt supports ("Conv", "domain.Op")."""
    return [_str(_lib.mopt_supported_op_name(i)) for i in range(_lib.mopt_supported_op_count())]


def numpy_dtype(mopt_dtype):
    """The numpy dtype for a mopt_dtype value, or None (undefined, string, bf16)."""
    return _NP_BY_MOPT.get(int(mopt_dtype))


def mopt_dtype(dtype):
    """The mopt_dtype value for a numpy dtype; raises DTypeError if libmopt has none."""
    dt = np.dtype(dtype)
    code = _MOPT_BY_NP.get(dt.newbyteorder("=")) if dt.byteorder != "|" else _MOPT_BY_NP.get(dt)
    if code is None:
        raise errors.DTypeError("numpy dtype %s has no libmopt element type" % dt,
                                errors.ERR_TYPE, "incompatible type")
    return code


# --------------------------------------------------------------------------- options

class _Closable:
    """What the classes that own a libmopt handle share: close() on leaving a
    `with` block, and on garbage collection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # never raise from a finalizer (e.g. at interpreter exit)
            pass

    def _release(self):
        """Destroys the handle with the class's _destroy, once."""
        h, self._handle = self._handle, None
        if h is not None:
            self._destroy(h)


class Options(_Closable):
    """A libmopt option set, used like a dict: Options(threads=2, backend="ref").

    Values: int (and bool) -> mopt_options_set_int, float -> set_double,
    str / path -> set_string. A bool for a string option (profile=True) means
    "1" / "". Reading an option (opts["threads"]) gives its value or default.
    Iterating gives the keys set explicitly, in order."""

    def __init__(self, options=None, **kwargs):
        self._handle = None
        self._log = []  # replayable ("set", key, value) / ("yaml", path) / ("yaml_string", text)
        h = ctypes.c_void_p()
        _check(_lib.mopt_options_create(ctypes.byref(h)))
        self._handle = h.value
        if options is not None:
            self.update(options)
        self.update(kwargs)

    @property
    def _as_parameter_(self):  # lets ctypes pass an Options where a mopt_options* goes
        if self._handle is None:
            raise errors.ClosedError("the Options object is closed")
        return ctypes.c_void_p(self._handle)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise errors.InvalidArgumentError("option keys are strings, not %r" % (key,))
        k = key.encode()
        h = self._as_parameter_
        if key == "threadpool":  # a ThreadPool (or None): mopt_options_set_threadpool
            if value is not None and not isinstance(value, ThreadPool):
                raise errors.InvalidArgumentError(
                    "option 'threadpool': a mopt.ThreadPool or None, not %s"
                    % type(value).__name__, errors.ERR_INVALID_ARGUMENT, "invalid argument")
            _check(_lib.mopt_options_set_threadpool(h, None if value is None else value._as_parameter_))
            self._log = [e for e in self._log if not (e[0] == "set" and e[1] == key)]
            if value is not None:
                self._log.append(("set", key, value))
            return
        if isinstance(value, (bool, np.bool_)):
            probe = ctypes.c_char_p()
            if _lib.mopt_options_get_string(h, k, ctypes.byref(probe)) == errors.OK:
                st = _lib.mopt_options_set_string(h, k, b"1" if value else b"")
            else:
                st = _lib.mopt_options_set_int(h, k, int(value))
        elif isinstance(value, (int, np.integer)):
            st = _lib.mopt_options_set_int(h, k, int(value))
        elif isinstance(value, (float, np.floating)):
            st = _lib.mopt_options_set_double(h, k, float(value))
        elif isinstance(value, (str, os.PathLike)):
            st = _lib.mopt_options_set_string(h, k, os.fsencode(value))
        else:
            raise errors.InvalidArgumentError(
                "option '%s': values are int, float, bool or str, not %s"
                % (key, type(value).__name__), errors.ERR_INVALID_ARGUMENT, "invalid argument")
        _check(st)
        self._log = [e for e in self._log if not (e[0] == "set" and e[1] == key)]
        self._log.append(("set", key, value))

    def __getitem__(self, key):
        if key == "threadpool":
            return next((e[2] for e in self._log if e[0] == "set" and e[1] == key), None)
        k = str(key).encode()
        h = self._as_parameter_
        i, d, s = ctypes.c_int64(), ctypes.c_double(), ctypes.c_char_p()
        st = _lib.mopt_options_get_int(h, k, ctypes.byref(i))
        if st == errors.OK:
            return i.value
        if st == errors.ERR_NOT_FOUND:
            _raise(st)
        if _lib.mopt_options_get_double(h, k, ctypes.byref(d)) == errors.OK:
            return d.value
        st = _lib.mopt_options_get_string(h, k, ctypes.byref(s))
        _check(st)
        return _str(s.value)

    def get(self, key, default=None):
        try:
            return self[key]
        except errors.NotFoundError:
            return default

    def update(self, other=(), **kwargs):
        """Sets every key of a mapping, another Options object, or keyword arguments."""
        if isinstance(other, Options):
            self._replay(other._log)
        else:
            items = other.items() if isinstance(other, Mapping) else other
            for key, value in items:
                self[key] = value
        for key, value in kwargs.items():
            self[key] = value

    def load_yaml(self, path):
        """Sets every key of a flat YAML mapping file (mopt_options_load_yaml)."""
        _check(_lib.mopt_options_load_yaml(self._as_parameter_, os.fsencode(path)))
        self._log.append(("yaml", os.fspath(path)))

    def load_yaml_string(self, text):
        """Sets every key of a flat YAML mapping given as text."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        _check(_lib.mopt_options_load_yaml_string(self._as_parameter_, data, len(data)))
        self._log.append(("yaml_string", data))

    def _replay(self, log):
        for entry in log:
            if entry[0] == "set":
                self[entry[1]] = entry[2]
            elif entry[0] == "yaml":
                self.load_yaml(entry[1])
            else:
                self.load_yaml_string(entry[1])

    def copy(self):
        """An independent Options object with the same settings."""
        o = Options()
        o._replay(self._log)
        return o

    def keys(self):
        return [e[1] for e in self._log if e[0] == "set"]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __contains__(self, key):
        return key in self.keys()

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def to_dict(self):
        return dict(self.items())

    def __repr__(self):
        if self._handle is None:
            return "<mopt.Options (closed)>"
        return "mopt.Options(%s)" % ", ".join("%s=%r" % kv for kv in self.items())

    def close(self):
        """Releases the C option set; further use raises ClosedError. Idempotent."""
        self._release()

    _destroy = staticmethod(_lib.mopt_options_destroy)


# --------------------------------------------------------------------------- thread pool

class ThreadPool(_Closable):
    """A shared budget of `threads` cores (mopt_threadpool, experimental):
    sessions and batchers given threadpool=pool (an option) never run more
    than `threads` compute threads at once between them, counting libmopt's
    kernels and oneDNN/OpenBLAS parallel regions. threads=0: the cores of
    this process. Without a pool every session runs on its own "threads".

    The C pool is reference-counted: close() drops this object's reference;
    sessions (and Options) holding the pool keep it alive until they go."""

    def __init__(self, threads=0):
        self._handle = None
        h = ctypes.c_void_p()
        _check(_lib.mopt_threadpool_create(int(threads), None, ctypes.byref(h)))
        self._handle = h.value

    @property
    def _as_parameter_(self):
        if self._handle is None:
            raise errors.ClosedError("the ThreadPool is closed")
        return ctypes.c_void_p(self._handle)

    def stats(self):
        """mopt_threadpool_get_stats as a dict: threads, sessions, cores_in_use,
        active_threads, peak_threads (most threads at work at once, <= threads),
        runs, waited_runs, wait_ns, parallel_nodes, narrowed_nodes."""
        s = _capi.ThreadPoolStats()
        s.struct_size = ctypes.sizeof(s)
        _check(_lib.mopt_threadpool_get_stats(self._as_parameter_, ctypes.byref(s)))
        return {name: int(getattr(s, name)) for name, _ in s._fields_ if name != "struct_size"}

    @property
    def threads(self):
        return self.stats()["threads"]

    def close(self):
        """Drops this object's reference. Idempotent."""
        self._release()

    _destroy = staticmethod(_lib.mopt_threadpool_destroy)

    def __repr__(self):
        if self._handle is None:
            return "<mopt.ThreadPool (closed)>"
        return "mopt.ThreadPool(threads=%d)" % self.threads


def _merged_options(base, options, kwargs):
    """A fresh Options: base's settings, then options' (Options or mapping), then kwargs."""
    o = base.copy() if base is not None else Options()
    try:
        if options is not None:
            o.update(options)
        o.update(kwargs)
    except BaseException:
        o.close()
        raise
    return o


# --------------------------------------------------------------------------- model

class TensorInfo(NamedTuple):
    """A model input or output. shape is None when the rank is unknown; each
    dimension is an int, the name of a symbolic dimension ("batch"), or None
    when unknown. dtype is a numpy dtype, or None when libmopt's element type
    has no numpy counterpart (see mopt_dtype)."""
    name: str
    dtype: Optional[np.dtype]
    shape: Optional[Tuple[Union[int, str, None], ...]]
    mopt_dtype: int


class _TensorMemory:
    """Owns a library-allocated output tensor for the numpy array that views
    its buffer (the array's .base); destroys the tensor when freed."""

    def __init__(self, handle, shape, dtype, data):
        self._handle = handle
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str,
                                    "data": (data, False), "version": 3}

    _destroy = staticmethod(_lib.mopt_tensor_destroy)

    def __del__(self):
        h, self._handle = self._handle, None
        if h:
            try:
                self._destroy(h)
            except Exception:  # never raise from a finalizer
                pass


class _Box:
    """A C handle shared between a Session and its Model, so whichever of the
    two is finalized first can release the session before the model."""
    __slots__ = ("handle", "__weakref__")

    def __init__(self, handle):
        self.handle = handle


class Model(_Closable):
    """A loaded, optimized ONNX model: Model("model.onnx", opt_level=2).

    source is a path (str or os.PathLike) or the model's bytes (bytes,
    bytearray, memoryview). Options are given as an Options object / dict
    (`options=`) and/or as keyword arguments; they are kept and become the
    defaults of every Session created from this model."""

    def __init__(self, source, options=None, **kwargs):
        self._handle = None
        self._sessions = set()
        self.options = _merged_options(None, options, kwargs)
        h = ctypes.c_void_p()
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            self.path = None
            st = _lib.mopt_model_load_from_memory(data, len(data), self.options, ctypes.byref(h))
        else:
            self.path = os.fspath(source)
            st = _lib.mopt_model_load(os.fsencode(self.path), self.options, ctypes.byref(h))
        if st != errors.OK:
            self.options.close()
            _raise(st)
        self._handle = h.value
        self.inputs = [self._io_info(MOPT_INPUT, i)
                       for i in range(_lib.mopt_model_io_count(self._handle, MOPT_INPUT))]
        self.outputs = [self._io_info(MOPT_OUTPUT, i)
                        for i in range(_lib.mopt_model_io_count(self._handle, MOPT_OUTPUT))]

    def _io_info(self, kind, index):
        h = self._handle
        name = _str(_lib.mopt_model_io_name(h, kind, index))
        code = _lib.mopt_model_io_dtype(h, kind, index)
        rank = _lib.mopt_model_io_rank(h, kind, index)
        shape = None
        if rank >= 0:
            dims = []
            for axis in range(rank):
                d = _lib.mopt_model_io_dim(h, kind, index, axis)
                dims.append(int(d) if d >= 0 else _str(_lib.mopt_model_io_dim_name(h, kind, index,
                                                                                    axis)))
            shape = tuple(dims)
        return TensorInfo(name, numpy_dtype(code), shape, int(code))

    def _check_open(self):
        if self._handle is None:
            raise errors.ClosedError("the Model is closed")
        return self._handle

    @property
    def node_count(self):
        """Nodes of the graph as it will run (after optimization)."""
        return int(_lib.mopt_model_node_count(self._check_open()))

    @property
    def nodes(self):
        """[(name, op_type)] of the graph as it will run, in order."""
        h = self._check_open()
        return [(_str(_lib.mopt_model_node_name(h, i)), _str(_lib.mopt_model_node_op_type(h, i)))
                for i in range(_lib.mopt_model_node_count(h))]

    @property
    def op_histogram(self):
        """{op_type: node count}, most frequent first."""
        return dict(Counter(op for _, op in self.nodes).most_common())

    @property
    def opset(self):
        """The opset imported for the default ONNX domain (-1 if none)."""
        return int(_lib.mopt_model_opset(self._check_open(), b""))

    def opset_for(self, domain):
        """The opset imported for an operator domain, or -1."""
        return int(_lib.mopt_model_opset(self._check_open(), domain.encode()))

    @property
    def parameter_count(self):
        """Number of weight elements over all initializers."""
        return int(_lib.mopt_model_parameter_count(self._check_open()))

    @property
    def parameter_bytes(self):
        return int(_lib.mopt_model_parameter_bytes(self._check_open()))

    @property
    def metadata(self):
        """What the model says about itself (ONNX ModelProto fields, kept in .mopt
        files): {"producer_name", "producer_version", "domain", "doc_string",
        "graph_name", "graph_doc_string": str ("" when absent), "model_version":
        int, "custom": {key: value} (metadata_props, in file order)}."""
        h = self._check_open()
        meta = {name: _str(_lib.mopt_model_info(h, code)) or ""
                for code, name in enumerate(_INFO_FIELDS)}
        meta["model_version"] = int(_lib.mopt_model_version(h))
        meta["custom"] = {_str(_lib.mopt_model_metadata_key(h, i)):
                          _str(_lib.mopt_model_metadata_value(h, i))
                          for i in range(_lib.mopt_model_metadata_count(h))}
        return meta

    def save(self, path):
        """Writes the model as it runs (optimized graph and weights) as a .mopt
        file (mopt_model_save). Model(path) loads it back without optimizing
        again, with its weights memory-mapped from the file, not copied."""
        _check(_lib.mopt_model_save(self._check_open(), os.fsencode(path)))

    def session(self, options=None, **kwargs):
        """Same as Session(self, ...)."""
        return Session(self, options, **kwargs)

    def __repr__(self):
        if self._handle is None:
            return "<mopt.Model (closed)>"
        return "<mopt.Model %s: %d nodes, inputs %s, outputs %s>" % (
            self.path or "(from memory)", self.node_count,
            [(i.name, i.shape) for i in self.inputs], [(o.name, o.shape) for o in self.outputs])

    def close(self):
        """Closes the sessions made from this model, then releases it. Idempotent."""
        for box in list(self._sessions):
            h, box.handle = box.handle, None
            if h is not None:
                self._destroy_session(h)
        self._sessions.clear()
        self._release()
        if getattr(self, "options", None) is not None:
            self.options.close()

    _destroy = staticmethod(_lib.mopt_model_destroy)
    _destroy_session = staticmethod(_lib.mopt_session_destroy)


# --------------------------------------------------------------------------- session

def _c_strings(names):
    """The names as a C array of UTF-8 strings (one slot at least)."""
    enc = [n.encode() for n in names]
    return (ctypes.c_char_p * max(len(enc), 1))(*enc)


def _destroy_tensors(outs, handles):
    """Destroys the outputs still in outs (an adopted one is None) and the
    input tensors of handles: the cleanup after a run."""
    for t in outs:
        if t:
            _lib.mopt_tensor_destroy(t)
    for t in handles:
        _lib.mopt_tensor_destroy(t)


def _data_address(arr):
    """The address of a contiguous array's first element. ctypes' from_buffer
    is several times cheaper than arr.ctypes.data; it needs a writable,
    non-empty buffer, so read-only and empty arrays take the slow way."""
    try:
        return _addressof(_char_from_buffer(arr))
    except (TypeError, ValueError, BufferError):
        return arr.ctypes.data


def _wrap_array(code, arr, what, ptr=None):
    """A tensor handle (mopt_tensor_wrap, dtype code) borrowing the buffer of
    arr (at ptr, if the caller has it), which must stay alive as long as the
    handle; failures name what."""
    rank = arr.ndim
    dims = (ctypes.c_int64 * rank)(*arr.shape) if rank else None
    t = ctypes.c_void_p()
    st = _lib.mopt_tensor_wrap(code, rank, dims,
                               ctypes.c_void_p(_data_address(arr) if ptr is None else ptr),
                               arr.nbytes, ctypes.byref(t))
    _check(st, what)
    return t.value


def _feed_array(info, value):
    """(dtype code, array) for one feed of the input described by info (a
    TensorInfo, or None): the array itself when libmopt can borrow its buffer
    as is (C-contiguous, aligned, native byte order), else a converted copy.
    Raises DTypeError for a dtype libmopt lacks."""
    if isinstance(value, np.ndarray):
        # fast path: a native-order libmopt dtype (a dict hit) in a usable layout
        code = _MOPT_BY_NP.get(value.dtype)
        flags = value.flags
        if code is not None and flags.c_contiguous and flags.aligned:
            return code, value
        arr = value
    else:
        want = info.dtype if info is not None else None
        arr = np.asarray(value, dtype=want)
    code = mopt_dtype(arr.dtype)  # raises DTypeError for dtypes libmopt lacks
    if arr.dtype.byteorder not in ("=", "|"):
        arr = arr.astype(arr.dtype.newbyteorder("="))  # byte-swapped: copy to native
    if not (arr.flags.c_contiguous and arr.flags.aligned):
        arr = np.ascontiguousarray(arr)  # strided / Fortran order / unaligned: copy
    return code, arr


def _wrap_feed(info, name, value):
    """(tensor handle, array) for one feed of the input described by info
    (a TensorInfo, or None); the handle borrows the array's buffer (zero
    copy) when the array allows it. Keep the array alive until the tensor
    is destroyed."""
    code, arr = _feed_array(info, value)
    return _wrap_array(code, arr, "input '%s'" % name), arr


def _adopt_tensor(handle):
    """A numpy array over a library-owned output tensor, which it then owns
    (no copy; bf16 is widened to float32, which copies)."""
    code = _lib.mopt_tensor_dtype(handle)
    shape = tuple(_lib.mopt_tensor_dims(handle)[:_lib.mopt_tensor_rank(handle)])
    dt = _NP_BY_MOPT.get(code)
    if dt is not None:  # the common case: the array views the tensor's buffer
        data = _lib.mopt_tensor_data(handle)
        if not data or 0 in shape:  # no elements (a rank-0 tensor has one)
            _lib.mopt_tensor_destroy(handle)
            return np.empty(shape, dt)
        return np.asarray(_TensorMemory(handle, shape, dt, data))
    if code == _DTYPE_BF16:  # no numpy bf16: widen exactly to float32
        nbytes = _lib.mopt_tensor_size_bytes(handle)
        raw = np.empty(shape, np.uint16)
        if nbytes:
            ctypes.memmove(raw.ctypes.data, _lib.mopt_tensor_data(handle), nbytes)
        _lib.mopt_tensor_destroy(handle)
        return (raw.astype(np.uint32) << 16).view(np.float32)
    raise errors.UnsupportedError("output of type %s cannot be returned as numpy"
                                  % _str(_lib.mopt_dtype_name(code)),
                                  errors.ERR_UNSUPPORTED, "unsupported")


class Session(_Closable):
    """Runs a Model: Session(model, threads=4).run({"input": x}).

    Options default to the model's; options / keyword arguments given here
    override them for this session (session keys: threads, profile, ...).
    A session serializes its own runs with a lock (libmopt sessions are
    single-threaded); use one session per thread for parallel runs."""

    def __init__(self, model, options=None, **kwargs):
        if not isinstance(model, Model):
            raise errors.InvalidArgumentError("Session needs a mopt.Model, not %s"
                                              % type(model).__name__)
        self._box = None
        mh = model._check_open()
        self.options = _merged_options(model.options, options, kwargs)
        h = ctypes.c_void_p()
        st = _lib.mopt_session_create(mh, self.options, ctypes.byref(h))
        if st != errors.OK:
            self.options.close()
            _raise(st)
        self.model = model
        self._box = _Box(h.value)
        model._sessions.add(self._box)
        self._lock = threading.Lock()
        self._inputs = {info.name: info for info in model.inputs}
        # Per-call work done once (issue 10): the default output names, the
        # C name arrays of name sets already checked, and the reusable C
        # arrays of one run (runs hold self._lock).
        self._out_all = [o.name for o in model.outputs]
        self._names_ok = {}  # (input names, output names) -> (C input names, C output names)
        self._in_tensors = (ctypes.c_void_p * max(len(model.inputs), 1))()
        self._outs = {}  # output count -> C array of tensor handles
        # input name -> (data address, dtype code, shape, tensor handle): the
        # tensor wrapped over the last buffer fed, reused while the same
        # buffer comes again (a wrap holds no data, only where and what).
        self._wraps = {}
        self._out_wraps = {}  # the same for caller-owned outputs (run_into, IO binding)

    def _check_open(self):
        if self._box is None or self._box.handle is None:
            raise errors.ClosedError("the Session is closed" if self._box is None or
                                     self.model._handle is not None else
                                     "the Session is closed (its Model was closed)")
        return self._box.handle

    def _wrap_input(self, name, value):
        """Returns (tensor handle, array) for one feed; the handle borrows the
        array's buffer (zero copy) when the array allows it. The caller must
        keep the array alive until the tensor is destroyed."""
        return _wrap_feed(self._inputs.get(name), name, value)

    @staticmethod
    def _adopt(handle):
        """A numpy array over a library-owned output tensor, which it then owns."""
        return _adopt_tensor(handle)

    def _wrap_output(self, name, arr):
        """A tensor handle over a caller-owned output array (the library writes
        into it). The handle belongs to the session, like _input_tensor's."""
        if not isinstance(arr, np.ndarray):
            raise errors.InvalidArgumentError(
                "output '%s': a caller-provided output must be a numpy array, not %s"
                % (name, type(arr).__name__), errors.ERR_INVALID_ARGUMENT, "invalid argument")
        code = mopt_dtype(arr.dtype)
        if not (arr.flags.c_contiguous and arr.flags.aligned and arr.flags.writeable and
                arr.dtype.byteorder in ("=", "|")):
            raise errors.InvalidArgumentError(
                "output '%s': a caller-provided output array must be C-contiguous, aligned, "
                "writable and in native byte order (the library writes into it)" % name,
                errors.ERR_INVALID_ARGUMENT, "invalid argument")
        return self._cached_wrap(self._out_wraps, name, code, arr, "output '%s'" % name)

    def _check_names(self, in_names, out_names):
        """Names every unknown or missing input and every unknown output."""
        model_in = [i.name for i in self.model.inputs]
        model_out = [o.name for o in self.model.outputs]
        unknown = [n for n in in_names if n not in self._inputs]
        if unknown:
            raise errors.NotFoundError(
                "unknown input%s %s; the model's inputs are %s"
                % ("s" if len(unknown) > 1 else "", ", ".join("'%s'" % n for n in unknown),
                   ", ".join("'%s'" % n for n in model_in)), errors.ERR_NOT_FOUND, "not found")
        missing = [n for n in model_in if n not in in_names]
        if missing:
            raise errors.InvalidArgumentError(
                "missing input%s %s: every model input must be fed (given: %s)"
                % ("s" if len(missing) > 1 else "", ", ".join("'%s'" % n for n in missing),
                   ", ".join("'%s'" % n for n in in_names) or "none"),
                errors.ERR_INVALID_ARGUMENT, "invalid argument")
        unknown = [n for n in out_names if n not in model_out]
        if unknown:
            raise errors.NotFoundError(
                "unknown output%s %s; the model's outputs are %s"
                % ("s" if len(unknown) > 1 else "", ", ".join("'%s'" % n for n in unknown),
                   ", ".join("'%s'" % n for n in model_out)), errors.ERR_NOT_FOUND, "not found")

    def _feed_items(self, feeds):
        if type(feeds) is dict or isinstance(feeds, Mapping):
            items = list(feeds.items())
        elif isinstance(feeds, (list, tuple)):
            if len(feeds) != len(self.model.inputs):
                raise errors.InvalidArgumentError(
                    "the model has %d inputs (%s) but %d were given"
                    % (len(self.model.inputs), ", ".join(i.name for i in self.model.inputs),
                       len(feeds)), errors.ERR_INVALID_ARGUMENT, "invalid argument")
            items = [(info.name, v) for info, v in zip(self.model.inputs, feeds)]
        else:
            raise errors.InvalidArgumentError("feeds must be a dict {name: array} or a list, "
                                              "not %s" % type(feeds).__name__,
                                              errors.ERR_INVALID_ARGUMENT, "invalid argument")
        for name, _ in items:
            if not isinstance(name, str):
                raise errors.InvalidArgumentError("input names are strings, not %r" % (name,))
        return items

    def _out_names(self, output_names):
        if output_names is None:
            return self._out_all
        if isinstance(output_names, str):
            return [output_names]
        return list(output_names)

    def _c_names(self, in_names, out_names):
        """The C arrays of input and output names, after checking the names
        (once per distinct pair of name lists; the raise is _check_names')."""
        key = (in_names, tuple(out_names))
        got = self._names_ok.get(key)
        if got is None:
            self._check_names(list(in_names), out_names)
            got = (_c_strings(in_names), _c_strings(out_names))
            if len(self._names_ok) >= 64:  # callers cycling through many subsets
                self._names_ok.clear()
            self._names_ok[key] = got
        return got

    def _input_tensor(self, name, value):
        """(tensor handle, array) for one feed, like _wrap_input, but the
        handle belongs to the session: the one wrapped for this input last
        time when the array has the same buffer, dtype and shape."""
        code, arr = _feed_array(self._inputs.get(name), value)
        return self._cached_wrap(self._wraps, name, code, arr, "input '%s'" % name), arr

    @staticmethod
    def _cached_wrap(cache, name, code, arr, what):
        """The tensor of cache[name] if it wraps arr's buffer with this dtype
        and shape, else a new one (stored there; the old one is freed)."""
        ptr = _data_address(arr)
        shape = arr.shape
        old = cache.get(name)
        if old is not None and old[0] == ptr and old[1] == code and old[2] == shape:
            return old[3]
        t = _wrap_array(code, arr, what, ptr)
        cache[name] = (ptr, code, shape, t)
        if old is not None:
            _lib.mopt_tensor_destroy(old[3])
        return t

    def _drop_wraps(self):
        for cache in (self._wraps, self._out_wraps):
            wraps = list(cache.values())
            cache.clear()
            for w in wraps:
                _lib.mopt_tensor_destroy(w[3])

    def _run(self, items, out_names, out_arrays=None, run_options=None):
        """Runs once; returns the outputs as a list in out_names order. out_arrays:
        None, or one entry per output: a caller-owned numpy array to write into,
        or None to let the library allocate it. run_options: None or a
        mopt_run_options handle (int), e.g. ort.RunOptions's, whose terminate
        flag another thread may set during the run (CancelledError)."""
        h = self._check_open()
        in_names, o_names = self._c_names(tuple([n for n, _ in items]), out_names)
        n_in, n_out = len(items), len(out_names)
        if out_arrays is not None and len(out_arrays) != n_out:
            raise errors.InvalidArgumentError("%d output arrays for %d outputs"
                                              % (len(out_arrays), n_out))
        with self._lock:
            outs = self._outs.get(n_out)
            if outs is None:
                outs = self._outs[n_out] = (ctypes.c_void_p * max(n_out, 1))()
            in_tensors = self._in_tensors
            if len(in_tensors) < n_in:  # only if the names checks let more through
                in_tensors = (ctypes.c_void_p * n_in)()
            keep = []  # the arrays the input tensors borrow, alive through the run
            try:
                for i, (name, value) in enumerate(items):
                    in_tensors[i], arr = self._input_tensor(name, value)
                    keep.append(arr)
                if out_arrays is not None:
                    for i, arr in enumerate(out_arrays):
                        if arr is not None:
                            outs[i] = self._wrap_output(out_names[i], arr)
                st = _lib.mopt_session_run_v2(h, run_options, n_in, in_names, in_tensors, n_out,
                                              o_names, outs)
                _check(st)
                if out_arrays is None:
                    results = []
                    for i in range(n_out):
                        results.append(_adopt_tensor(outs[i]))
                        outs[i] = None  # the array owns it now
                    return results
                results = []
                for i in range(n_out):
                    if out_arrays[i] is not None:
                        results.append(out_arrays[i])
                    else:
                        results.append(_adopt_tensor(outs[i]))
                        outs[i] = None  # the array owns it now
                return results
            finally:
                for i in range(n_out):  # the outputs not adopted (an error, or caller-owned)
                    if outs[i]:
                        if out_arrays is None or out_arrays[i] is None:
                            _lib.mopt_tensor_destroy(outs[i])
                        outs[i] = None
                del keep

    def run(self, feeds, output_names=None):
        """Runs the model once.

        feeds: {input name: array} (or a list of arrays in model input order).
        output_names: names of the outputs wanted (default: all, model order).
        Returns {output name: numpy array}; each array views the library's
        output buffer (no copy). Raises a MoptError subclass (DTypeError,
        ShapeError, NotFoundError naming an unknown input or output,
        InvalidArgumentError naming a missing input, ...)."""
        out_names = self._out_names(output_names)
        got = self._run(self._feed_items(feeds), out_names)
        return dict(zip(out_names, got))

    def run_into(self, feeds, outputs):
        """Runs the model once, writing into caller-owned arrays (no copy either way).

        outputs: {output name: numpy array} with exactly the output's dtype and
        shape, C-contiguous and writable. Returns the same dict."""
        names = list(outputs)
        self._run(self._feed_items(feeds), names, [outputs[n] for n in names])
        return outputs

    def stats(self):
        """{key: int} from mopt_session_get_stat: runs, peak_bytes, arena_bytes, last_run_ns,
        inplace_outputs."""
        h = self._check_open()
        out = {}
        v = ctypes.c_int64()
        for key in _STAT_KEYS:
            st = _lib.mopt_session_get_stat(h, key.encode(), ctypes.byref(v))
            if st == errors.ERR_NOT_FOUND:  # an older library without that statistic
                continue
            _check(st, "statistic '%s'" % key)
            out[key] = int(v.value)
        return out

    def profile(self):
        """Per-node timings of the last run, in execution order:
        [{"node", "op", "kernel", "ns", "flops"}]. Empty unless the session was
        created with profile=True (or "1", or a Chrome-trace path) and has run."""
        h = self._check_open()
        return [{
            "node": _str(_lib.mopt_session_profile_node(h, i)),
            "op": _str(_lib.mopt_session_profile_op(h, i)),
            "kernel": _str(_lib.mopt_session_profile_kernel(h, i)),
            "ns": int(_lib.mopt_session_profile_ns(h, i)),
            "flops": int(_lib.mopt_session_profile_flops(h, i)),
        } for i in range(_lib.mopt_session_profile_count(h))]

    def close(self):
        """Releases the session (writing its Chrome trace if one was asked for). Idempotent."""
        box, self._box = self._box, None
        if box is not None:
            h, box.handle = box.handle, None
            if h is not None:
                self._destroy(h)
            self.model._sessions.discard(box)
        if getattr(self, "_wraps", None) is not None:
            self._drop_wraps()
        if getattr(self, "options", None) is not None:
            self.options.close()

    _destroy = staticmethod(_lib.mopt_session_destroy)


class _OnModel(_Closable):
    """What Batcher and Generator share: they run on a Model, or on one they
    load from a path themselves (and close with them)."""

    def _take_model(self, model, options, kwargs, **load_defaults):
        """Sets self.model (model, or the one loaded from path model with
        options/kwargs and load_defaults under them) and self.options (the
        model's options, then options, then kwargs); returns the model."""
        self._own_model = None
        if not isinstance(model, Model):
            for k, v in load_defaults.items():
                kwargs.setdefault(k, v)
            model = self._own_model = Model(model, options, **kwargs)
            options, kwargs = None, {}
        model._check_open()
        self.model = model
        self.options = _merged_options(model.options, options, kwargs)
        return model

    def _close_owned(self):
        """Closes this object's options, and the model it loaded itself."""
        if getattr(self, "options", None) is not None:
            self.options.close()
        if self._own_model is not None:
            self._own_model.close()


# --------------------------------------------------------------------------- batcher

_BATCHER_STATS = ("requests", "completed", "failed", "rejected_full", "timed_out", "batches",
                  "queue_depth", "rejected_invalid", "reruns", "padded_elements",
                  "input_elements", "effective_max_batch")


class Batcher(_OnModel):
    """Dynamic batching (mopt_batcher): many threads call run() with ONE
    sample each (batch dim 1 on axis 0); the library coalesces them along
    axis 0 into one session run (up to max_batch, or after max_delay_us),
    zero-pads ragged axis-1 inputs (token ids, masks) to seq_buckets and
    hands each caller its own rows, cropped to its own length.

        with mopt.Batcher("bert.onnx", max_batch=16, seq_buckets=[16, 32, 64]) as b:
            out = b.run({"input_ids": ids[None], "attention_mask": mask[None]})

    model: a mopt.Model or a path (then loaded with options/kwargs).
    options / kwargs: session options of each worker (threads=1, ...), over
    the model's own. Thread-safe: run() may be called from any number of
    Python threads at once; the GIL is released while a call waits (ctypes).
    A full queue raises BusyError at once; a request not started within
    timeout_us raises CancelledError. close() (or leaving the `with` block)
    stops accepting new calls, lets the running ones finish, then drains and
    releases the C batcher."""

    def __init__(self, model, max_batch=8, max_delay_us=2000, queue_capacity=256, workers=1,
                 seq_buckets=None, no_padding=False, options=None, **kwargs):
        self._handle = None
        self._cv = threading.Condition()
        self._active = 0
        self._closing = False
        model = self._take_model(model, options, kwargs)
        buckets = [int(b) for b in (seq_buckets or [])]
        self.seq_buckets = tuple(buckets)
        barr = (ctypes.c_int64 * max(len(buckets), 1))(*buckets)
        cfg = _capi.BatcherConfig()
        cfg.struct_size = ctypes.sizeof(cfg)
        cfg.max_batch = int(max_batch)
        cfg.max_delay_us = int(max_delay_us)
        cfg.queue_capacity = int(queue_capacity)
        cfg.workers = int(workers)
        cfg.seq_buckets = ctypes.cast(barr, _capi.c_int64_p) if buckets else None
        cfg.n_seq_buckets = len(buckets)
        cfg.no_padding = 1 if no_padding else 0
        h = ctypes.c_void_p()
        st = _lib.mopt_batcher_create(model._handle, self.options, ctypes.byref(cfg),
                                      ctypes.byref(h))
        if st != errors.OK:
            self._close_owned()
            _raise(st)
        self._handle = h.value
        self._inputs = {info.name: info for info in model.inputs}
        self._out_all = [o.name for o in model.outputs]

    def _enter(self):
        with self._cv:
            if self._handle is None or self._closing:
                raise errors.ClosedError("the Batcher is closed")
            self._active += 1
            return self._handle

    def _leave(self):
        with self._cv:
            self._active -= 1
            if self._active == 0:
                self._cv.notify_all()

    def run(self, inputs, timeout_us=0, output_names=None):
        """Runs one sample: inputs {name: array with batch dim 1} (or a list in
        model input order). Returns {output name: numpy array}, each of batch
        dim 1 (axis 1 cropped to this sample's length where it was padded).
        Raises BusyError (queue full), CancelledError (not started within
        timeout_us; 0 = wait as long as needed), or the error of this sample
        alone (ShapeError, DTypeError, ...)."""
        if isinstance(inputs, Mapping):
            items = list(inputs.items())
        elif isinstance(inputs, (list, tuple)):
            items = [(info.name, v) for info, v in zip(self.model.inputs, inputs)]
        else:
            raise errors.InvalidArgumentError("inputs must be a dict {name: array} or a list, "
                                              "not %s" % type(inputs).__name__,
                                              errors.ERR_INVALID_ARGUMENT, "invalid argument")
        if output_names is None:
            out_names = self._out_all
        elif isinstance(output_names, str):
            out_names = [output_names]
        else:
            out_names = list(output_names)
        h = self._enter()
        handles, keep = [], []
        n_in, n_out = len(items), len(out_names)
        outs = (ctypes.c_void_p * max(n_out, 1))()
        try:
            for name, value in items:
                if not isinstance(name, str):
                    raise errors.InvalidArgumentError("input names are strings, not %r"
                                                      % (name,))
                t, arr = _wrap_feed(self._inputs.get(name), name, value)
                handles.append(t)
                keep.append(arr)
            in_names, o_names = _c_strings(n for n, _ in items), _c_strings(out_names)
            in_tensors = (ctypes.c_void_p * max(n_in, 1))(*handles)
            st = _lib.mopt_batcher_run(h, n_in, in_names, in_tensors, n_out, o_names, outs,
                                       int(timeout_us))
            _check(st)
            results = {}
            for i, name in enumerate(out_names):
                results[name] = _adopt_tensor(outs[i])
                outs[i] = None  # the array owns it now
            return results
        finally:
            _destroy_tensors(outs, handles)
            del keep
            self._leave()

    def stats(self):
        """The counters of mopt_batcher_get_stats: {"requests", "completed", "failed",
        "rejected_full", "timed_out", "batches", "queue_depth", "rejected_invalid",
        "reruns", "padded_elements", "input_elements", "effective_max_batch",
        "batch_sizes": {size: batches}}."""
        h = self._enter()
        try:
            s = _capi.BatcherStats()
            s.struct_size = ctypes.sizeof(s)
            _check(_lib.mopt_batcher_get_stats(h, ctypes.byref(s)))
        finally:
            self._leave()
        out = {k: int(getattr(s, k)) for k in _BATCHER_STATS}
        out["batch_sizes"] = {k + 1: int(n) for k, n in enumerate(s.batch_size_hist) if n}
        return out

    def close(self):
        """Stops accepting calls, waits for the ones in progress (they finish
        normally), then releases the batcher (and the model if it loaded it).
        Idempotent."""
        with self._cv:
            if self._handle is None:
                return
            self._closing = True
            while self._active:
                self._cv.wait()
            h, self._handle = self._handle, None
        self._destroy(h)
        self._close_owned()

    _destroy = staticmethod(_lib.mopt_batcher_destroy)


# --------------------------------------------------------------------------- generator

_GENERATOR_STATS = ("layers", "heads", "head_dim", "vocab", "max_seq", "cached_tokens",
                    "reused_tokens", "prefill_tokens", "generated_tokens", "steps", "prefill_ns",
                    "last_step_ns", "last_step_plans", "last_step_heap_tensors",
                    "capacity_planned", "last_step_inferred_nodes", "kv_cache_bf16",
                    "kv_cache_bytes")


class Generator(_OnModel):
    """Token generation with a KV cache (mopt_generator) over a decoder
    exported with past_key_values inputs and present outputs:

        with mopt.Generator("kjv-tiny.onnx", max_seq=512) as g:
            ids = g.generate(list(b"In the beginning"), 64, temperature=0.8, top_k=40,
                             seed=7, stop_tokens=[10])
            for tok in g.stream(list(b"And God said"), 32):   # one token at a time
                print(chr(tok), end="", flush=True)

    model: a mopt.Model, or a path, then loaded with kv_cache=1 (token-major
    caches appended in place: no per-step copy of the past) and
    options/kwargs. max_seq: cache positions (prompt and generated tokens).
    Sampling: temperature (0 = greedy), top_k (0 = all), top_p (1 = all),
    repetition_penalty (1 = off), seed (a request is deterministic for a
    seed). kv_cache_dtype="bf16" (an option, as a keyword or in options)
    keeps the cache as bf16 tiles: half its memory and a shorter attention
    step at bf16 rounding of K and V (stats()["kv_cache_bf16"] says which);
    the default is "f32". A later request whose prompt starts with the cached tokens
    prefills only its new part (prefix reuse). One thread at a time drives a
    Generator; cancel() may be called from any thread."""

    def __init__(self, model, max_seq=1024, options=None, **kwargs):
        self._handle = None
        model = self._take_model(model, options, kwargs, kv_cache=1)
        h = ctypes.c_void_p()
        st = _lib.mopt_generator_create(model._handle, self.options, int(max_seq),
                                        ctypes.byref(h))
        if st != errors.OK:
            self._close_owned()
            _raise(st)
        self._handle = h.value
        self.max_seq = int(max_seq)
        self.vocab = self.stats()["vocab"]

    def _h(self):
        if self._handle is None:
            raise errors.ClosedError("the Generator is closed")
        return self._handle

    def _configure(self, temperature, top_k, top_p, repetition_penalty, seed, stop_tokens):
        h = self._h()
        _check(_lib.mopt_generator_set_double(h, b"temperature", float(temperature)))
        _check(_lib.mopt_generator_set_int(h, b"top_k", int(top_k)))
        _check(_lib.mopt_generator_set_double(h, b"top_p", float(top_p)))
        _check(_lib.mopt_generator_set_double(h, b"repetition_penalty",
                                              float(repetition_penalty)))
        _check(_lib.mopt_generator_set_int(h, b"seed", int(seed)))
        stops = [int(t) for t in (stop_tokens or ())]
        arr = (ctypes.c_int64 * max(len(stops), 1))(*stops)
        _check(_lib.mopt_generator_set_stop_tokens(h, arr, len(stops)))

    def generate(self, prompt_ids, max_new_tokens, temperature=0.0, top_k=0, top_p=1.0,
                 repetition_penalty=1.0, seed=0, stop_tokens=(), callback=None):
        """Generates up to max_new_tokens tokens after prompt_ids (a sequence of
        token ids, or a 1-D integer array) and returns them as a list of ints.
        Ends early at a stop token (not included), when callback(token, index)
        returns a true value (that token is included), when the cache is full,
        or on cancel() (CancelledError; the tokens so far stay cached). An
        exception raised by the callback stops generation and is re-raised."""
        h = self._h()
        prompt = [int(t) for t in np.asarray(prompt_ids).reshape(-1)]
        self._configure(temperature, top_k, top_p, repetition_penalty, seed, stop_tokens)
        _check(_lib.mopt_generator_set_cancel(h, 0))
        out, failure = [], []

        def on_token(user, token, index):
            try:
                out.append(int(token))
                return 1 if callback is not None and callback(int(token), int(index)) else 0
            except BaseException as e:  # stop, and re-raise in the caller
                failure.append(e)
                return 1

        cb = _capi.TokenCallback(on_token)
        arr = (ctypes.c_int64 * max(len(prompt), 1))(*prompt)
        n = ctypes.c_size_t()
        st = _lib.mopt_generator_generate(h, arr, len(prompt), int(max_new_tokens),
                                          ctypes.cast(cb, ctypes.c_void_p), None, ctypes.byref(n))
        if failure:
            raise failure[0]
        _check(st)
        return out

    def stream(self, prompt_ids, max_new_tokens, **sampling):
        """generate() as an iterator: yields each token as the model produces it
        (the generation runs on a helper thread). Leaving the loop early
        cancels the request; the tokens produced so far stay cached."""
        import queue

        q = queue.Queue()
        done = object()

        def work():
            try:
                self.generate(prompt_ids, max_new_tokens, callback=lambda t, i: q.put(t),
                              **sampling)
                q.put(done)
            except BaseException as e:
                q.put(e)

        t = threading.Thread(target=work, daemon=True)
        t.start()
        finished = False
        try:
            while True:
                item = q.get()
                if item is done:
                    finished = True
                    return
                if isinstance(item, BaseException):
                    finished = True
                    raise item
                yield item
        finally:
            if not finished:
                self.cancel()
            t.join()
            if not finished:
                _lib.mopt_generator_set_cancel(self._handle, 0)

    def cancel(self):
        """Stops the request in progress before its next step (any thread).
        generate() then raises CancelledError."""
        if self._handle is not None:
            _check(_lib.mopt_generator_set_cancel(self._handle, 1))

    def logits(self):
        """A copy of the logits (vocab floats) of the last position run, or None."""
        p = _lib.mopt_generator_logits(self._h())
        if not p:
            return None
        return np.ctypeslib.as_array(p, (self.vocab,)).copy()

    def reset(self):
        """Forgets the cache: the next request prefills its whole prompt."""
        _lib.mopt_generator_reset(self._h())

    def stats(self):
        """mopt_generator_get_stat for every key: {"cached_tokens": ..., ...}."""
        h = self._h()
        out = {}
        for k in _GENERATOR_STATS:
            v = ctypes.c_int64()
            _check(_lib.mopt_generator_get_stat(h, k.encode(), ctypes.byref(v)))
            out[k] = int(v.value)
        return out

    def close(self):
        """Releases the generator (and the model if it loaded it). Idempotent."""
        if self._handle is None:
            return
        h, self._handle = self._handle, None
        _lib.mopt_generator_destroy(h)
        self._close_owned()
