"""TVM's ``tvm.tir`` names for tirfun's nodes and expression helpers.

Code written against ``tvm.tir`` ports by changing the import::

    from tirfun import tir
    x = tir.Var("x", "int32")
    e = tir.floordiv(x, 4) + tir.const(1, "int32")
"""

from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Allocate, And, AssertStmt, AttrStmt, Block, BlockRealize,
    Broadcast, Buffer, BufferLoad, BufferRegion, BufferStore, Call, Cast, DataType, DeclBuffer,
    Div, Evaluate, FloatImm, FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IRModule,
    IterVar, Let, LetStmt, MatchBufferRegion, Max, Min, Mod, Mul, Not, Or, PrimExpr, PrimFunc,
    Ramp, Range, Select, SeqStmt, Stmt, StringImm, Sub, Var,
)
from ..nodes import AllocateConst, BufferRealize, While
from .index_map import IndexMap
from .tensor_intrin import TensorIntrin
from .op import *  # noqa: F401,F403 - the helper functions, under TVM's names
from .op import __all__ as _op_all

__all__ = [
    "EQ", "GE", "GT", "LE", "LT", "NE", "Add", "Allocate", "And", "AssertStmt", "AttrStmt",
    "Block", "BlockRealize", "Broadcast", "Buffer", "BufferLoad", "BufferRegion", "BufferStore",
    "Call", "Cast", "DataType", "DeclBuffer", "Div", "Evaluate", "FloatImm", "FloorDiv",
    "FloorMod", "For", "ForKind", "IfThenElse", "IntImm", "IRModule", "IterVar", "Let",
    "LetStmt", "MatchBufferRegion", "Max", "Min", "Mod", "Mul", "Not", "Or", "PrimExpr",
    "PrimFunc", "Ramp", "Range", "Select", "SeqStmt", "Stmt", "StringImm", "Sub", "Var",
    "While", "AllocateConst", "BufferRealize", "IndexMap", "TensorIntrin", *_op_all,
]
