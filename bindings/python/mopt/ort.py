"""ort.py — an onnxruntime-compatible face of the binding, so that a program
written for ONNX Runtime runs on libmopt with only its import changed
(`import mopt as ort` instead of `import onnxruntime as ort`).

It offers the parts of onnxruntime's Python API that CPU inference programs
use: InferenceSession (get_inputs/get_outputs/run/io_binding/...),
SessionOptions, RunOptions, GraphOptimizationLevel, ExecutionMode, NodeArg,
ModelMetadata, IOBinding, OrtValue, get_available_providers, get_device.
Everything is built on core.Model / core.Session; no copies are added: inputs
are borrowed, outputs view the library's buffers or are written into the
caller's arrays (IO binding).

Mapping of options: intra_op_num_threads -> threads (0 = one per core, as in
ORT), graph_optimization_level -> opt_level (DISABLE_ALL 0, BASIC 1,
EXTENDED 2, LAYOUT and ALL 3), enable_profiling -> profile,
log_severity_level 0 (verbose) -> verbose. Session config entries whose key
starts with "mopt." set libmopt options directly ("mopt.backend" = "onednn").
"""
import ctypes
import enum
import json
import os
import time
import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import core, errors

PROVIDER = "CPUExecutionProvider"

# mopt_dtype -> ONNX Runtime's type string for a tensor of that element type.
_ORT_TYPE = {
    1: "tensor(float)", 2: "tensor(uint8)", 3: "tensor(int8)", 4: "tensor(uint16)",
    5: "tensor(int16)", 6: "tensor(int32)", 7: "tensor(int64)", 8: "tensor(string)",
    9: "tensor(bool)", 10: "tensor(float16)", 11: "tensor(double)", 12: "tensor(uint32)",
    13: "tensor(uint64)", 16: "tensor(bfloat16)",
}


def get_available_providers() -> List[str]:
    """The execution providers of this build: libmopt runs on the CPU."""
    return [PROVIDER]


def get_all_providers() -> List[str]:
    return [PROVIDER]


def get_device() -> str:
    return "CPU"


def get_version_string() -> str:
    return core.version()


class GraphOptimizationLevel(enum.IntEnum):
    """ORT's optimization levels (same values); see _OPT_LEVEL for libmopt's."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


# ORT level -> libmopt opt_level: 0 runs the graph as imported, 1 folds and
# eliminates, 2 also fuses, 3 also prepacks weights into kernel layouts.
_OPT_LEVEL = {0: 0, 1: 1, 2: 2, 3: 3, 99: 3}


class ExecutionMode(enum.IntEnum):
    """Accepted for compatibility: libmopt runs the nodes of one run in order,
    each node on the intra-op threads."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class _Settable:
    """A class whose instances accept only the attributes they were created
    with (as ORT's pybind11 objects do): a misspelt option is an error."""

    def __setattr__(self, name, value):
        if (name not in self.__dict__ and not name.startswith("_") and
                not isinstance(getattr(type(self), name, None), property)):
            raise AttributeError("'%s' object has no attribute '%s'"
                                 % (type(self).__name__, name))
        object.__setattr__(self, name, value)


def _config_entry(config: Dict[str, str], owner: str, key: str) -> str:
    """Config entry `key` of SessionOptions or RunOptions (owner); a key never
    set is an InvalidArgumentError."""
    if key not in config:
        raise errors.InvalidArgumentError("%s: no config entry '%s'" % (owner, key))
    return config[key]


class SessionOptions(_Settable):
    """onnxruntime.SessionOptions: the attributes ORT programs set, mapped to
    libmopt options when a session is created (see the module docstring)."""

    def __init__(self):
        d = self.__dict__
        d["intra_op_num_threads"] = 0
        d["inter_op_num_threads"] = 0
        d["graph_optimization_level"] = GraphOptimizationLevel.ORT_ENABLE_ALL
        d["execution_mode"] = ExecutionMode.ORT_SEQUENTIAL
        d["execution_order"] = 0
        d["enable_profiling"] = False
        d["profile_file_prefix"] = "onnxruntime_profile_"
        d["log_severity_level"] = 2
        d["log_verbosity_level"] = 0
        d["logid"] = ""
        d["enable_cpu_mem_arena"] = True
        d["enable_mem_pattern"] = True
        d["enable_mem_reuse"] = True
        d["optimized_model_filepath"] = ""
        d["use_deterministic_compute"] = False
        d["use_per_session_threads"] = True
        d["_config"] = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Stores a config entry; keys "mopt.<option>" set that libmopt option."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        return _config_entry(self._config, "SessionOptions", key)

    def register_custom_ops_library(self, path: str) -> None:
        raise errors.UnsupportedError("libmopt has no custom-op libraries (asked for %s)" % path,
                                      errors.ERR_UNSUPPORTED, "unsupported")

    def _to_mopt(self) -> Dict[str, Any]:
        """The libmopt options these settings mean."""
        level = int(self.graph_optimization_level)
        if level not in _OPT_LEVEL:
            raise errors.InvalidArgumentError(
                "graph_optimization_level %r is not one of GraphOptimizationLevel's" % (level,),
                errors.ERR_INVALID_ARGUMENT, "invalid argument")
        threads = int(self.intra_op_num_threads)
        if threads < 0:
            raise errors.InvalidArgumentError("intra_op_num_threads must be >= 0, not %d"
                                              % threads, errors.ERR_INVALID_ARGUMENT,
                                              "invalid argument")
        if self.optimized_model_filepath:
            warnings.warn("SessionOptions.optimized_model_filepath is ignored: libmopt "
                          "optimizes at every load (mopt optimize saves a .mopt file)",
                          stacklevel=3)
        opts = {"threads": threads, "opt_level": _OPT_LEVEL[level]}
        if self.enable_profiling:
            opts["profile"] = "1"
        if int(self.log_severity_level) <= 0:
            opts["verbose"] = 1
        for key, value in self._config.items():
            if key.startswith("mopt."):
                opts[key[5:]] = value
        return opts


class RunOptions(_Settable):
    """onnxruntime.RunOptions over libmopt's run options (mopt_run_options).

    terminate is real cancellation: setting it to True, from any thread and
    at any time, stops a run using these options before its next node
    (mopt.CancelledError, a RuntimeError); it stays set, so later runs fail
    at once too, until it is set back to False (as in ORT). logid is the run
    tag: it appears in libmopt's log lines and profile trace."""

    def __init__(self):
        d = self.__dict__
        d["log_severity_level"] = 2
        d["log_verbosity_level"] = 0
        d["only_execute_path_to_fetches"] = False
        d["_config"] = {}
        d["_terminate"] = False
        d["_handle"] = None
        h = ctypes.c_void_p()
        st = core._lib.mopt_run_options_create(ctypes.byref(h))
        if st != errors.OK:
            core._raise(st)
        d["_handle"] = h.value

    @property
    def terminate(self) -> bool:
        return self._terminate

    @terminate.setter
    def terminate(self, value: bool) -> None:
        core._check(core._lib.mopt_run_options_set_terminate(self._handle, 1 if value else 0))
        self.__dict__["_terminate"] = bool(value)

    @property
    def logid(self) -> str:
        return core._str(core._lib.mopt_run_options_tag(self._handle)) or ""

    @logid.setter
    def logid(self, value: str) -> None:
        core._check(core._lib.mopt_run_options_set_tag(self._handle, str(value).encode()),
                    "RunOptions.logid")

    def __del__(self):
        h = self.__dict__.get("_handle")
        if h:
            self.__dict__["_handle"] = None
            _destroy_run_options(h)

    def add_run_config_entry(self, key: str, value: str) -> None:
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key: str) -> str:
        return _config_entry(self._config, "RunOptions", key)


_destroy_run_options = core._lib.mopt_run_options_destroy


class NodeArg:
    """An input or output of the model: name, shape (list of int, symbolic name
    or None per dimension) and type (ORT's string, e.g. "tensor(float)")."""

    def __init__(self, info: core.TensorInfo):
        self.name = info.name
        self.shape = list(info.shape) if info.shape is not None else []
        self.type = _ORT_TYPE.get(info.mopt_dtype, "tensor(undefined)")

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class ModelMetadata:
    """What the model says about itself (ORT's names for the ONNX fields):
    producer_name, graph_name, graph_description (the graph's doc_string),
    domain, description (the model's doc_string), version (model_version)
    and custom_metadata_map (metadata_props)."""

    def __init__(self, graph_name: str = ""):
        self.producer_name = ""
        self.graph_name = graph_name
        self.graph_description = ""
        self.domain = ""
        self.description = ""
        self.version = 0
        self.custom_metadata_map: Dict[str, str] = {}

    @staticmethod
    def _of(model: core.Model) -> "ModelMetadata":
        meta = model.metadata
        m = ModelMetadata(meta["graph_name"])
        m.producer_name = meta["producer_name"]
        m.graph_description = meta["graph_doc_string"]
        m.domain = meta["domain"]
        m.description = meta["doc_string"]
        m.version = meta["model_version"]
        m.custom_metadata_map = dict(meta["custom"])
        return m


def _check_cpu(device_type, device_id=0):
    if str(device_type).lower() != "cpu" or int(device_id) != 0:
        raise errors.UnsupportedError("libmopt runs on the CPU: device %s:%s is not available"
                                      % (device_type, device_id), errors.ERR_UNSUPPORTED,
                                      "unsupported")


def _view(buffer_ptr, element_type, shape):
    """A numpy array over caller memory at buffer_ptr (no copy)."""
    dt = np.dtype(element_type)
    shape = tuple(int(d) for d in shape)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if not buffer_ptr:
        raise errors.InvalidArgumentError("buffer_ptr is NULL", errors.ERR_INVALID_ARGUMENT,
                                          "invalid argument")

    class _Mem:  # exposes the raw memory to numpy
        __array_interface__ = {"shape": shape, "typestr": dt.str,
                               "data": (int(buffer_ptr), False), "version": 3}

    arr = np.asarray(_Mem())
    assert arr.nbytes == n
    return arr


class OrtValue:
    """A tensor on the CPU, backed by a numpy array (ORT's OrtValue)."""

    def __init__(self, array: np.ndarray):
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0) -> "OrtValue":
        """Wraps the array without copying it (the OrtValue keeps it alive)."""
        _check_cpu(device_type, device_id)
        return OrtValue(np.asarray(numpy_obj))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu",
                                     device_id=0) -> "OrtValue":
        _check_cpu(device_type, device_id)
        return OrtValue(np.empty(tuple(shape), dtype=element_type))

    def numpy(self) -> np.ndarray:
        """The array itself (no copy)."""
        return self._array

    def shape(self) -> List[int]:
        return list(self._array.shape)

    def data_type(self) -> str:
        return _ORT_TYPE.get(core.mopt_dtype(self._array.dtype), "tensor(undefined)")

    def element_type(self):
        return self._array.dtype.type

    def device_name(self) -> str:
        return "cpu"

    def data_ptr(self) -> int:
        return int(self._array.ctypes.data)

    def tensor_size_in_bytes(self) -> int:
        return int(self._array.nbytes)

    def is_tensor(self) -> bool:
        return True

    def has_value(self) -> bool:
        return True

    def __repr__(self):
        return "OrtValue(%s, shape=%s)" % (self.data_type(), self.shape())


class IOBinding:
    """Binds inputs and outputs to arrays once; run_with_iobinding then reads the
    inputs in place and writes bound outputs straight into the caller's memory
    (libmopt's caller-provided output tensors): no copy in either direction.
    An output bound without memory is allocated by the library at each run and
    viewed (not copied) by get_outputs()."""

    def __init__(self, session: "InferenceSession"):
        self._session = session
        self._inputs: Dict[str, np.ndarray] = {}
        self._outputs: Dict[str, Optional[np.ndarray]] = {}
        self._results: List[OrtValue] = []

    def bind_cpu_input(self, name: str, arr_on_cpu) -> None:
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr) -> None:
        """Binds caller memory (a raw address) as an input, as ORT does."""
        _check_cpu(device_type, device_id)
        self._inputs[name] = _view(buffer_ptr, element_type, shape)

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None) -> None:
        """Binds an output: to caller memory (element_type, shape, buffer_ptr),
        or, without buffer_ptr, to a buffer the library allocates at each run."""
        _check_cpu(device_type, device_id)
        if buffer_ptr is None:
            self._outputs[name] = None
        else:
            if element_type is None or shape is None:
                raise errors.InvalidArgumentError(
                    "bind_output('%s'): a buffer_ptr needs element_type and shape" % name,
                    errors.ERR_INVALID_ARGUMENT, "invalid argument")
            self._outputs[name] = _view(buffer_ptr, element_type, shape)

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        """Binds an output to the OrtValue's array: the library writes into it."""
        self._outputs[name] = ortvalue.numpy()

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()
        self._results = []

    def synchronize_inputs(self) -> None:  # CPU only: nothing to wait for
        pass

    def synchronize_outputs(self) -> None:
        pass

    def get_outputs(self) -> List[OrtValue]:
        """The outputs of the last run, in binding order (no copy)."""
        return list(self._results)

    def get_outputs_as_ortvaluevector(self) -> List[OrtValue]:
        return self.get_outputs()

    def copy_outputs_to_cpu(self) -> List[np.ndarray]:
        """Copies of the outputs of the last run, as ORT returns them."""
        return [v.numpy().copy() for v in self._results]


class InferenceSession:
    """onnxruntime.InferenceSession over a libmopt model and session.

    path_or_bytes: a model file (.onnx or .mopt) or its bytes. providers: only
    CPUExecutionProvider exists here; another name is warned about and the CPU
    is used, as ORT does for providers its build lacks."""

    def __init__(self, path_or_bytes, sess_options: Optional[SessionOptions] = None,
                 providers: Optional[Sequence] = None, provider_options=None, **kwargs):
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._check_providers(providers)
        self._model_path = None if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) \
            else os.fspath(path_or_bytes)
        self._model = core.Model(path_or_bytes, self._sess_options._to_mopt())
        try:
            self._session = core.Session(self._model)
        except BaseException:
            self._model.close()
            raise
        self._inputs_meta = [NodeArg(i) for i in self._model.inputs]
        self._outputs_meta = [NodeArg(o) for o in self._model.outputs]
        self._profile_events: List[Dict[str, Any]] = []
        self._profile_start_ns = time.time_ns()

    @staticmethod
    def _check_providers(providers):
        for p in providers or []:
            name = p[0] if isinstance(p, (tuple, list)) else p
            if name != PROVIDER:
                warnings.warn("Specified provider '%s' is not in available provider names. "
                              "Available providers: '%s'" % (name, PROVIDER), stacklevel=3)

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs_meta)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs_meta)

    def get_overridable_initializers(self) -> List[NodeArg]:
        return []

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata._of(self._model)

    def get_providers(self) -> List[str]:
        return [PROVIDER]

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {PROVIDER: {"backend": str(self._session.options["backend"])}}

    def set_providers(self, providers=None, provider_options=None) -> None:
        self._check_providers(providers)

    def get_session_options(self) -> SessionOptions:
        return self._sess_options

    def disable_fallback(self) -> None:
        pass

    def enable_fallback(self) -> None:
        pass

    def _feed(self, input_feed):
        if not isinstance(input_feed, dict):
            raise errors.InvalidArgumentError("input_feed must be a dict {name: array}, not %s"
                                              % type(input_feed).__name__,
                                              errors.ERR_INVALID_ARGUMENT, "invalid argument")
        return [(k, v.numpy() if isinstance(v, OrtValue) else v) for k, v in input_feed.items()]

    @staticmethod
    def _handle(run_options):
        """The mopt_run_options handle of an ORT RunOptions (None: none)."""
        if run_options is None:
            return None
        if not isinstance(run_options, RunOptions):
            raise errors.InvalidArgumentError("run_options must be a RunOptions, not %s"
                                              % type(run_options).__name__,
                                              errors.ERR_INVALID_ARGUMENT, "invalid argument")
        return run_options._handle

    def _after(self):
        if self._sess_options.enable_profiling:
            self._profile_events.append({"ts_ns": time.time_ns(),
                                         "nodes": self._session.profile()})

    def run(self, output_names, input_feed, run_options: Optional[RunOptions] = None):
        """Returns the outputs named in output_names (None or []: all, model order)
        as a list of numpy arrays. Unknown or missing input names are named in
        the error."""
        names = list(output_names) if output_names else [o.name for o in self._outputs_meta]
        got = self._session._run(self._feed(input_feed), names,
                                 run_options=self._handle(run_options))
        self._after()
        return got

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        return [OrtValue(a) for a in self.run(output_names, input_dict_ort_values, run_options)]

    def io_binding(self) -> IOBinding:
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options=None) -> None:
        names = list(iobinding._outputs)
        got = self._session._run(list(iobinding._inputs.items()), names,
                                 [iobinding._outputs[n] for n in names],
                                 run_options=self._handle(run_options))
        iobinding._results = [OrtValue(a) for a in got]
        self._after()

    def get_profiling_start_time_ns(self) -> int:
        return self._profile_start_ns

    def end_profiling(self) -> str:
        """Writes the per-node timings of the runs so far as a Chrome trace
        (<profile_file_prefix><date>.json) and returns its name; "" when
        profiling is off."""
        if not self._sess_options.enable_profiling:
            return ""
        path = "%s%s.json" % (self._sess_options.profile_file_prefix,
                              time.strftime("%Y-%m-%d_%H-%M-%S"))
        events = []
        for run_index, run in enumerate(self._profile_events):
            total = sum(n["ns"] for n in run["nodes"])
            t = (run["ts_ns"] - total - self._profile_start_ns) / 1000.0
            for n in run["nodes"]:
                events.append({"name": n["node"], "cat": "Node", "ph": "X", "pid": 0,
                               "tid": 0, "ts": t, "dur": n["ns"] / 1000.0,
                               "args": {"op_name": n["op"], "provider": n["kernel"],
                                        "run": run_index}})
                t += n["ns"] / 1000.0
        with open(path, "w") as f:
            json.dump(events, f)
        self._profile_events = []
        return path
