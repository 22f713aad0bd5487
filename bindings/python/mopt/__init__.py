"""mopt — Python binding (ctypes) for libmopt, the embeddable ONNX CPU runtime.

    import mopt, numpy as np
    with mopt.Model("model.onnx", threads=2) as model:
        with mopt.Session(model) as sess:
            out = sess.run({"input": np.zeros((1, 3, 32, 32), np.float32)})

onnxruntime's API is here too (ort.py), so ORT programs run with only
their import changed:

    import mopt as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {sess.get_inputs()[0].name: x})

The shared library is found through MOPT_LIBRARY, next to the package, in
the source tree's build/ folder, by the dynamic loader or pkg-config (see
_capi.py).
"""
from .errors import (BusyError, CancelledError, ClosedError, DTypeError, FileError, InternalError, InvalidArgumentError,
                     InvalidModelError, LimitError, MoptError, NotFoundError, OutOfMemoryError,
                     ParseError, ShapeError, UnsupportedError)
from ._capi import BINDING_VERSION_NUMBER, LibraryNotFoundError
from .core import (Batcher, Generator, Model, Options, Session, TensorInfo, ThreadPool,
                   library_path, mopt_dtype, numpy_dtype, supported_ops, version,
                   version_number)
from .ort import (ExecutionMode, GraphOptimizationLevel, InferenceSession, IOBinding,
                  ModelMetadata, NodeArg, OrtValue, RunOptions, SessionOptions,
                  get_all_providers, get_available_providers, get_device, get_version_string)

__version__ = "0.2.0"

__all__ = [
    "Model", "Session", "Batcher", "Generator", "ThreadPool", "Options", "TensorInfo",
    "supported_ops", "version", "version_number",
    "library_path", "numpy_dtype", "mopt_dtype", "BINDING_VERSION_NUMBER",
    "LibraryNotFoundError", "MoptError", "InvalidArgumentError", "OutOfMemoryError", "FileError",
    "ParseError", "InvalidModelError", "UnsupportedError", "ShapeError", "DTypeError",
    "NotFoundError", "LimitError", "InternalError", "CancelledError", "BusyError", "ClosedError",
    # onnxruntime-compatible API (ort.py)
    "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
    "ExecutionMode", "NodeArg", "ModelMetadata", "IOBinding", "OrtValue",
    "get_available_providers", "get_all_providers", "get_device", "get_version_string",
]
