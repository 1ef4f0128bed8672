"""The keyword arguments of ``script()``, as TVM's ``script()`` takes them.

TVM's printer takes one set of options for every object; tirfun accepts the
same names, so code written for TVM runs unchanged. Where tirfun has the
feature, the option means what it means in TVM:

``name``
    the name of the printed module's class or function's ``def``;
``tir_prefix`` / ``ir_prefix``
    the names of the ``tir`` and ``ir`` namespaces (``T``, ``I``);
``indent_spaces``
    the indentation step;
``print_line_numbers``
    each line starts with its 1-based number, right-aligned, as TVM prints
    them.

The others are accepted and have no effect, for these reasons:

``show_meta``
    tirfun prints every value inline; there is no metadata section;
``relax_prefix``, ``module_alias``, ``show_all_struct_info``
    they concern Relax functions, which tirfun does not have;
``buffer_dtype``, ``int_dtype``, ``float_dtype``
    the dtypes TVM leaves unwritten; tirfun always writes TVM's defaults'
    choices (a ``float32`` buffer, ``int32`` literals), so the text parses
    back to the same module;
``verbose_expr``, ``syntax_sugar``
    tirfun prints one canonical form, TVM's default (sugared, no
    definitions of free variables in expressions printed alone);
``show_object_address``
    nodes are immutable values: they have no identity to show;
``num_context_lines``, ``path_to_underline``, ``path_to_annotate``,
``obj_to_underline``, ``obj_to_annotate``
    underlining and annotating parts of the text are not implemented;
    tirfun's errors show the offending lines themselves.

An unknown keyword is a :class:`~tirfun.errors.NodeError` (a ``TypeError``)
naming it.
"""

from __future__ import annotations

from typing import Any

from ..errors import NodeError

#: TVM's options without an effect here, with their defaults
IGNORED = {
    "show_meta": False, "relax_prefix": "R", "module_alias": "cls", "buffer_dtype": "float32",
    "int_dtype": "int32", "float_dtype": "void", "verbose_expr": False, "num_context_lines": -1,
    "syntax_sugar": True, "show_object_address": False, "show_all_struct_info": True,
    "path_to_underline": None, "path_to_annotate": None, "obj_to_underline": None,
    "obj_to_annotate": None,
}
#: the options with an effect, with their defaults
EFFECTIVE = {"name": None, "tir_prefix": "T", "ir_prefix": "I", "indent_spaces": 4,
             "print_line_numbers": False}


def script_text(node, **options: Any) -> str:
    """``node`` as TVMScript, with TVM's ``script()`` keyword arguments."""
    from .printer import to_script

    unknown = sorted(set(options) - set(EFFECTIVE) - set(IGNORED))
    if unknown:
        raise NodeError(f"script() got an unexpected keyword argument {unknown[0]!r}")
    opts = {**EFFECTIVE, **{k: v for k, v in options.items() if k in EFFECTIVE}}
    for key in ("tir_prefix", "ir_prefix"):
        if not isinstance(opts[key], str) or not opts[key].isidentifier():
            raise NodeError(f"script(): {key} must be a Python identifier, got {opts[key]!r}")
    name = opts["name"]
    if name is not None and (not isinstance(name, str) or not name.isidentifier()):
        raise NodeError(f"script(): name must be a Python identifier, got {name!r}")
    indent = opts["indent_spaces"]
    if type(indent) is not int or indent < 1:
        raise NodeError(f"script(): indent_spaces must be a positive int, got {indent!r}")
    text = to_script(node, tir_prefix=opts["tir_prefix"], ir_prefix=opts["ir_prefix"],
                     indent_spaces=indent, name=name)
    if opts["print_line_numbers"]:
        text = number_lines(text)
    return text


def number_lines(text: str) -> str:
    """``text`` with each line prefixed by its number and a space, the
    numbers right-aligned to the width of the largest (as TVM does)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it starts none
    width = len(str(len(lines))) + 1
    return "\n".join(f"{i + 1} ".rjust(width) + line for i, line in enumerate(lines))


__all__ = ["script_text", "number_lines", "IGNORED", "EFFECTIVE"]
