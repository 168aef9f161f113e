"""Errors a user of adcore can get; each message names the function and, where there is one, the parameter."""


class AdcoreError(Exception):
    """Base of every error adcore raises for a mistake in a user program."""


class TraceError(AdcoreError):
    """The Python body of `fn` did something the language cannot express."""


class AdcoreTypeError(AdcoreError, TypeError):
    """Wrong arity or argument type, or an IR that does not type-check."""


class LinearityError(AdcoreError):
    """A derivative (usually a custom JVP) is not linear in its tangents, so it cannot be transposed."""


class DomainError(AdcoreError, ValueError):
    """A math function got an argument outside its domain (reported by the interpreter)."""


class OpaqueCallError(AdcoreError):
    """An opaque function's Python implementation failed while compiled code called it."""

    def __init__(self, function: str, cause: BaseException):
        super().__init__(f"opaque function {function} raised {type(cause).__name__}: {cause}")
        self.function = function


class RangeError(AdcoreError, IndexError):
    """A value known only at run time is outside its range (a loop's count); compiled code raises
    `WasmRangeError` with the same message."""


class WasmCompileError(AdcoreError, ValueError):
    """The Wasm engine refused to compile a module (e.g. a function beyond its size limits)."""


def count_message(where: str, k: int, n: int) -> str:
    """The error of a loop asked to run k times with room for n (the same text from the interpreter
    and from compiled code)."""
    return f"in {where}: loop count {k} is outside 0..{n}"


def segment_message(where: str, s: int, last: int) -> str:
    """The error of a `segment_sum` term sent to segment s of segments 0..last."""
    return f"in {where}: segment {s} is outside 0..{last}"


RANGE_MESSAGES = {"count": count_message, "segment": segment_message}  # kind of run-time check -> its error
