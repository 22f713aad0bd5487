"""errors.py — the exceptions raised by the mopt binding, one per mopt_status.

Every exception derives from MoptError, which carries the status code
(`.status`, an int equal to the C enum value), its name (`.status_name`, from
mopt_status_string) and the library's detailed message (`.message`, from
mopt_last_error). Each class also derives from the closest built-in
exception, so `except ValueError` or `except KeyError` work as one expects.
"""

# mopt_status values (include/mopt/mopt.h); stable, only ever appended.
OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_OUT_OF_MEMORY = 2
ERR_IO = 3
ERR_PARSE = 4
ERR_INVALID_MODEL = 5
ERR_UNSUPPORTED = 6
ERR_SHAPE = 7
ERR_TYPE = 8
ERR_NOT_FOUND = 9
ERR_LIMIT = 10
ERR_INTERNAL = 11
ERR_CANCELLED = 12
ERR_BUSY = 13


class MoptError(Exception):
    """A libmopt call failed. status: the mopt_status code; message: the reason."""

    status = None

    def __init__(self, message, status=None, status_name=None):
        if status is not None:
            self.status = status
        self.status_name = status_name or type(self).__name__
        self.message = message
        super().__init__(message)

    def __str__(self):
        # KeyError would quote the message; OSError would format errno: keep it plain.
        return "%s: %s" % (self.status_name, self.message) if self.message else self.status_name


class InvalidArgumentError(MoptError, ValueError):
    """A bad argument or option value (MOPT_ERR_INVALID_ARGUMENT)."""
    status = ERR_INVALID_ARGUMENT


class OutOfMemoryError(MoptError, MemoryError):
    """An allocation failed (MOPT_ERR_OUT_OF_MEMORY)."""
    status = ERR_OUT_OF_MEMORY


class FileError(MoptError, OSError):
    """A file could not be opened, read or written (MOPT_ERR_IO)."""
    status = ERR_IO


class ParseError(MoptError, ValueError):
    """A malformed model or tensor file (MOPT_ERR_PARSE)."""
    status = ERR_PARSE


class InvalidModelError(MoptError, ValueError):
    """A well-formed but invalid graph (MOPT_ERR_INVALID_MODEL)."""
    status = ERR_INVALID_MODEL


class UnsupportedError(MoptError, NotImplementedError):
    """An operator, attribute or dtype libmopt does not implement (MOPT_ERR_UNSUPPORTED)."""
    status = ERR_UNSUPPORTED


class ShapeError(MoptError, ValueError):
    """Incompatible or invalid shapes (MOPT_ERR_SHAPE)."""
    status = ERR_SHAPE


class DTypeError(MoptError, TypeError):
    """Incompatible element types (MOPT_ERR_TYPE)."""
    status = ERR_TYPE


class NotFoundError(MoptError, KeyError):
    """No input, output or option of that name (MOPT_ERR_NOT_FOUND)."""
    status = ERR_NOT_FOUND


class LimitError(MoptError, RuntimeError):
    """A configured limit (memory_limit, sizes) was exceeded (MOPT_ERR_LIMIT)."""
    status = ERR_LIMIT


class InternalError(MoptError, RuntimeError):
    """A bug in libmopt (MOPT_ERR_INTERNAL): please report it."""
    status = ERR_INTERNAL


class CancelledError(MoptError, RuntimeError):
    """The run was cancelled: its RunOptions.terminate was set (MOPT_ERR_CANCELLED)."""
    status = ERR_CANCELLED


class BusyError(MoptError, RuntimeError):
    """The session is running on another thread (MOPT_ERR_BUSY): use one session per thread."""
    status = ERR_BUSY


class ClosedError(MoptError, ValueError):
    """The Model or Session was closed (a binding-side error, status INVALID_ARGUMENT)."""
    status = ERR_INVALID_ARGUMENT


_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, FileError, ParseError, InvalidModelError,
    UnsupportedError, ShapeError, DTypeError, NotFoundError, LimitError, InternalError,
    CancelledError, BusyError)}


def error_class(status):
    """The exception class for a status code (MoptError for unknown codes)."""
    return _BY_STATUS.get(status, MoptError)
