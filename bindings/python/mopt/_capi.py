"""_capi.py — finds libmopt, loads it with ctypes and declares the C API.

Discovery order (the first that loads wins):
  1. the MOPT_LIBRARY environment variable (a path to libmopt.so; if it is
     set, nothing else is tried, so a wrong path is an error, not a fallback);
  2. libmopt.so* next to the package (inside the package folder or beside
     it): a copy bundled into the wheel of a local build;
  3. build/libmopt.so in the nearest folder above the package that has one
     (the source tree's meson build folder);
  4. the system's dynamic loader, by soname (libmopt.so.0: LD_LIBRARY_PATH,
     the ld.so cache, the default folders), i.e. a `meson install`ed libmopt;
  5. `pkg-config --variable=libdir mopt` (an install under a prefix the
     loader does not search, found through PKG_CONFIG_PATH);
  6. ctypes.util.find_library("mopt").
library_path is the file actually loaded (from dladdr), whichever way.
"""
import ctypes
import ctypes.util
import os
import subprocess
from pathlib import Path

# The libmopt version this binding was written against (MOPT_VERSION_NUMBER
# of include/mopt/mopt.h). The major number must match the library's.
BINDING_VERSION_NUMBER = 200  # 0.2.0
BINDING_VERSION_MAJOR = BINDING_VERSION_NUMBER // 10000

_LIB_NAMES = ("libmopt.so", "libmopt.so.0", "libmopt.dylib")


class LibraryNotFoundError(ImportError):
    """libmopt could not be found or loaded, or its version does not fit."""


_SONAME = "libmopt.so.0"


def _pkg_config_libdir():
    """libdir of an installed mopt.pc, or None (no pkg-config, no mopt.pc)."""
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "mopt"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = r.stdout.strip()
    return Path(libdir) if r.returncode == 0 and libdir else None


def _candidates():
    """Yields (path or soname, how-found) pairs in discovery order, after MOPT_LIBRARY.
    A bare soname (no folder) is for the dynamic loader to resolve."""
    pkg_dir = Path(__file__).resolve().parent
    for folder in (pkg_dir, pkg_dir.parent):
        for name in _LIB_NAMES:
            yield folder / name, "next to the package"
    for folder in pkg_dir.parents:
        for name in _LIB_NAMES:
            cand = folder / "build" / name
            if cand.is_file():
                yield cand, "in the build folder " + str(folder / "build")
    yield _SONAME, "by the dynamic loader (soname %s)" % _SONAME
    libdir = _pkg_config_libdir()
    if libdir is not None:
        for name in _LIB_NAMES:
            yield libdir / name, "by pkg-config (libdir %s)" % libdir
    found = ctypes.util.find_library("mopt")
    if found:
        yield found, "by ctypes.util.find_library('mopt')"


def _open(path):
    """ctypes.CDLL(path), or None when it is not a file / the loader cannot find it."""
    if isinstance(path, Path) and not path.is_file():
        return None
    try:
        return ctypes.CDLL(str(path))
    except OSError:
        if isinstance(path, Path):  # a file that is there but does not load: say why
            raise
        return None


def find_library():
    """Returns (CDLL, how) of the library to use, or raises LibraryNotFoundError."""
    env = os.environ.get("MOPT_LIBRARY")
    if env:
        p = Path(env)
        if not p.is_file():
            raise LibraryNotFoundError(
                "MOPT_LIBRARY is set to '%s', which is not a file; point it at libmopt.so "
                "(e.g. build/libmopt.so after 'meson setup build && ninja -C build')" % env)
        candidates = iter([(p, "from MOPT_LIBRARY")])
    else:
        candidates = _candidates()
    tried = []
    for path, how in candidates:
        try:
            lib = _open(path)
        except OSError as e:
            raise LibraryNotFoundError("cannot load libmopt %s (%s): %s" % (how, path, e)) from e
        if lib is not None:
            return lib, how
        tried.append(str(path))
    raise LibraryNotFoundError(
        "cannot find libmopt: set MOPT_LIBRARY to the path of libmopt.so, or build the "
        "library (meson setup build && ninja -C build) in the source tree that holds this "
        "package, or install it (meson install) where the dynamic loader or pkg-config finds "
        "it. Tried: MOPT_LIBRARY (unset), " + ", ".join(tried) +
        ", pkg-config --variable=libdir mopt, ctypes.util.find_library('mopt')")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _loaded_path(lib):
    """The file the loader actually mapped for lib (dladdr of one of its functions)."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        info = _DlInfo()
        addr = ctypes.cast(lib.mopt_version, ctypes.c_void_p)
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return Path(os.fsdecode(info.dli_fname))
    except (AttributeError, OSError):
        pass
    return Path(lib._name)


c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_size_p = ctypes.POINTER(ctypes.c_size_t)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)
c_char_pp = ctypes.POINTER(ctypes.c_char_p)

# name: (restype, argtypes). Opaque handles are c_void_p.
_PROTOTYPES = {
    "mopt_version_number": (ctypes.c_int, []),
    "mopt_version": (ctypes.c_char_p, []),
    "mopt_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "mopt_last_error": (ctypes.c_char_p, []),
    "mopt_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "mopt_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "mopt_options_create": (ctypes.c_int, [c_void_pp]),
    "mopt_options_destroy": (None, [ctypes.c_void_p]),
    "mopt_options_set_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]),
    "mopt_options_set_double": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double]),
    "mopt_options_set_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    "mopt_options_get_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_int64_p]),
    "mopt_options_get_double": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                               ctypes.POINTER(ctypes.c_double)]),
    "mopt_options_get_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_char_pp]),
    "mopt_options_load_yaml": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "mopt_options_load_yaml_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                     ctypes.c_size_t]),
    "mopt_model_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_void_p, c_void_pp]),
    "mopt_model_load_from_memory": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t,
                                                   ctypes.c_void_p, c_void_pp]),
    "mopt_model_destroy": (None, [ctypes.c_void_p]),
    "mopt_model_save": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "mopt_model_io_count": (ctypes.c_size_t, [ctypes.c_void_p, ctypes.c_int]),
    "mopt_model_io_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]),
    "mopt_model_io_dtype": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]),
    "mopt_model_io_rank": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]),
    "mopt_model_io_dim": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                                           ctypes.c_int]),
    "mopt_model_io_dim_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                                                 ctypes.c_int]),
    "mopt_model_io_find": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                          c_size_p]),
    "mopt_model_node_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "mopt_model_node_op_type": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_model_node_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_model_opset": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_char_p]),
    "mopt_model_parameter_count": (ctypes.c_int64, [ctypes.c_void_p]),
    "mopt_model_parameter_bytes": (ctypes.c_int64, [ctypes.c_void_p]),
    "mopt_supported_op_count": (ctypes.c_size_t, []),
    "mopt_supported_op_name": (ctypes.c_char_p, [ctypes.c_size_t]),
    "mopt_tensor_create": (ctypes.c_int, [ctypes.c_int, ctypes.c_int, c_int64_p, c_void_pp]),
    "mopt_tensor_wrap": (ctypes.c_int, [ctypes.c_int, ctypes.c_int, c_int64_p, ctypes.c_void_p,
                                        ctypes.c_size_t, c_void_pp]),
    "mopt_tensor_destroy": (None, [ctypes.c_void_p]),
    "mopt_tensor_dtype": (ctypes.c_int, [ctypes.c_void_p]),
    "mopt_tensor_rank": (ctypes.c_int, [ctypes.c_void_p]),
    "mopt_tensor_dims": (c_int64_p, [ctypes.c_void_p]),
    "mopt_tensor_element_count": (ctypes.c_int64, [ctypes.c_void_p]),
    "mopt_tensor_size_bytes": (ctypes.c_size_t, [ctypes.c_void_p]),
    "mopt_tensor_data": (ctypes.c_void_p, [ctypes.c_void_p]),
    "mopt_session_create": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, c_void_pp]),
    "mopt_session_destroy": (None, [ctypes.c_void_p]),
    "mopt_session_run": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_char_pp,
                                        c_void_pp, ctypes.c_size_t, c_char_pp, c_void_pp]),
    "mopt_session_run_v2": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                           c_char_pp, c_void_pp, ctypes.c_size_t, c_char_pp,
                                           c_void_pp]),
    "mopt_run_options_create": (ctypes.c_int, [c_void_pp]),
    "mopt_run_options_destroy": (None, [ctypes.c_void_p]),
    "mopt_run_options_set_tag": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "mopt_run_options_tag": (ctypes.c_char_p, [ctypes.c_void_p]),
    "mopt_run_options_set_profiling": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "mopt_run_options_set_terminate": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "mopt_model_info": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "mopt_model_version": (ctypes.c_int64, [ctypes.c_void_p]),
    "mopt_model_metadata_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "mopt_model_metadata_key": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_model_metadata_value": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_options_set_dim": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]),
    "mopt_tensor_wrap_const": (ctypes.c_int, [ctypes.c_int, ctypes.c_int, c_int64_p,
                                              ctypes.c_void_p, ctypes.c_size_t, c_void_pp]),
    "mopt_session_get_stat": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_int64_p]),
    "mopt_session_profile_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "mopt_session_profile_node": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_session_profile_op": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_session_profile_kernel": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_session_profile_ns": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_size_t]),
    "mopt_session_profile_flops": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_size_t]),
    # dynamic batching (experimental section of mopt.h)
    "mopt_batcher_create": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                           c_void_pp]),
    "mopt_batcher_destroy": (None, [ctypes.c_void_p]),
    "mopt_batcher_run": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, c_char_pp, c_void_pp,
                                        ctypes.c_size_t, c_char_pp, c_void_pp, ctypes.c_int64]),
    "mopt_batcher_get_stats": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    # shared thread pool (experimental section of mopt.h)
    "mopt_threadpool_create": (ctypes.c_int, [ctypes.c_int, ctypes.c_void_p, c_void_pp]),
    "mopt_threadpool_destroy": (None, [ctypes.c_void_p]),
    "mopt_options_set_threadpool": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "mopt_threadpool_get_stats": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    # generation with a KV cache (experimental section of mopt.h)
    "mopt_generator_create": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                             c_void_pp]),
    "mopt_generator_destroy": (None, [ctypes.c_void_p]),
    "mopt_generator_set_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64]),
    "mopt_generator_set_double": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                 ctypes.c_double]),
    "mopt_generator_set_stop_tokens": (ctypes.c_int, [ctypes.c_void_p, c_int64_p,
                                                      ctypes.c_size_t]),
    "mopt_generator_set_cancel": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "mopt_generator_generate": (ctypes.c_int, [ctypes.c_void_p, c_int64_p, ctypes.c_size_t,
                                               ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p,
                                               ctypes.POINTER(ctypes.c_size_t)]),
    "mopt_generator_logits": (ctypes.POINTER(ctypes.c_float), [ctypes.c_void_p]),
    "mopt_generator_reset": (None, [ctypes.c_void_p]),
    "mopt_generator_get_stat": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_int64_p]),
}

# mopt_token_callback: int (*)(void *user, int64_t token, size_t index)
TokenCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t)


class BatcherConfig(ctypes.Structure):
    """mopt_batcher_config (include/mopt/mopt.h), field for field."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("max_batch", ctypes.c_int),
                ("max_delay_us", ctypes.c_int64), ("queue_capacity", ctypes.c_size_t),
                ("workers", ctypes.c_int), ("seq_buckets", c_int64_p),
                ("n_seq_buckets", ctypes.c_size_t), ("no_padding", ctypes.c_int)]


class ThreadPoolStats(ctypes.Structure):
    """mopt_threadpool_stats (include/mopt/mopt.h), field for field."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("threads", ctypes.c_int),
                ("sessions", ctypes.c_int), ("cores_in_use", ctypes.c_int),
                ("active_threads", ctypes.c_int), ("peak_threads", ctypes.c_int),
                ("runs", ctypes.c_uint64), ("waited_runs", ctypes.c_uint64),
                ("wait_ns", ctypes.c_uint64), ("parallel_nodes", ctypes.c_uint64),
                ("narrowed_nodes", ctypes.c_uint64)]


class BatcherStats(ctypes.Structure):
    """mopt_batcher_stats (include/mopt/mopt.h), field for field."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("requests", ctypes.c_uint64),
                ("completed", ctypes.c_uint64), ("failed", ctypes.c_uint64),
                ("rejected_full", ctypes.c_uint64), ("timed_out", ctypes.c_uint64),
                ("batches", ctypes.c_uint64), ("batch_size_hist", ctypes.c_uint64 * 64),
                ("queue_depth", ctypes.c_size_t), ("rejected_invalid", ctypes.c_uint64),
                ("reruns", ctypes.c_uint64), ("padded_elements", ctypes.c_uint64),
                ("input_elements", ctypes.c_uint64), ("effective_max_batch", ctypes.c_int)]


def load():
    """Loads the library, declares every prototype and checks the version.

    Returns (CDLL, path of the loaded file). Raises LibraryNotFoundError with the reason."""
    lib, how = find_library()
    path = _loaded_path(lib)
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise LibraryNotFoundError("libmopt at %s (%s) lacks %s: it is too old for this binding"
                                   % (path, how, ", ".join(missing)))
    number = lib.mopt_version_number()
    if number // 10000 != BINDING_VERSION_MAJOR:
        raise LibraryNotFoundError(
            "libmopt at %s (%s) is version %s (%d) but this binding was written for major "
            "version %d (%d); use a matching library or binding"
            % (path, how, lib.mopt_version().decode(), number, BINDING_VERSION_MAJOR,
               BINDING_VERSION_NUMBER))
    return lib, path
