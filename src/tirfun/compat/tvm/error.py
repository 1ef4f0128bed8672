"""``tvm.error``: the error classes a TVM user catches. The parser's
``DiagnosticError`` is tirfun's ParseError (raised for TVMScript tirfun
refuses, located in the user's text); ``TVMError`` is tirfun's base error."""

from ...errors import ParseError as DiagnosticError
from ...errors import TirfunError as TVMError

__all__ = ["DiagnosticError", "TVMError"]
