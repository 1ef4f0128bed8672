"""The TensorIR node set: frozen records, nothing else.

The grammar, in ASDL style (``*`` a sequence, ``?`` optional)::

    dtype  = "int8|16|32|64" | "uint1..64" | "bool" | "float16|32|64" | "bfloat16"
           | "float8_e4m3fn" | "float8_e5m2" | "float4_e2m1fn"
           | any of those with lanes, "float32x8" | "handle" | "void"

    expr   = Var(str name, dtype, PointerType? type_annotation)   -- T.handle("float32")
           | IntImm(dtype, int value) | FloatImm(dtype, float value) | StringImm(str value)
           | Add(expr a, expr b) | Sub | Mul | Div | Mod | FloorDiv | FloorMod | Min | Max
           | EQ(expr a, expr b) | NE | LT | LE | GT | GE            -- dtype bool
           | And(expr a, expr b) | Or | Not(expr a)
           | Select(expr condition, expr true_value, expr false_value)
           | Cast(dtype, expr value)
           | BufferLoad(Buffer buffer, expr* indices, expr? predicate)  -- masked lanes
           | Call(dtype, str op, expr* args)       -- "tir.exp", "tir.if_then_else", ...
           | Call(dtype, GlobalVar op, expr* args) -- a function of the module; dtype its return
           | Ramp(expr base, expr stride, int lanes) | Broadcast(expr value, int lanes)
           | Shuffle(expr* vectors, IntImm* indices)  -- lanes of the vectors end to end
           | Let(Var var, expr value, expr body)

    stmt   = BufferStore(Buffer buffer, expr value, expr* indices, expr? predicate)
           | For(Var loop_var, expr min, expr extent, ForKind kind, stmt body,
                 str? thread_binding, map annotations)
           | SeqStmt(stmt* seq) | IfThenElse(expr condition, stmt then_case, stmt? else_case)
           | Evaluate(expr value) | LetStmt(Var var, expr value, stmt body)
           | While(expr condition, stmt body)
           | AllocateConst(Var buffer_var, dtype, expr* extents, number* data, stmt body,
                           map annotations)
           | BufferRealize(Buffer buffer, Range* bounds, expr condition, stmt body)
           | Prefetch(Buffer buffer, Range* bounds)
           | AttrStmt(object node, str attr_key, expr value, stmt body)
           | AssertStmt(expr condition, StringImm message, stmt body)
           | Allocate(Var buffer_var, dtype, expr* extents, expr condition, stmt body,
                      map annotations, str scope)
           | DeclBuffer(Buffer buffer, stmt body)
           | BlockRealize(expr* iter_values, expr predicate, Block block)
           | Block(IterVar* iter_vars, BufferRegion* reads, BufferRegion* writes,
                   str name_hint, stmt body, stmt? init, Buffer* alloc_buffers,
                   MatchBufferRegion* match_buffers, map annotations)

    ForKind     = serial | parallel | vectorized | unrolled | thread_binding
    IterVar     = (Range dom, Var var, IterVarType iter_type, str thread_tag)
    IterVarType = DataPar | CommReduce | Ordered | Opaque
    Range       = (expr min, expr extent)
    Buffer      = (str name, expr* shape, dtype, expr* strides, expr? elem_offset,
                   str storage_scope, Var? data, int data_alignment, int offset_factor,
                   int* axis_separators, str buffer_type)
    BufferRegion      = (Buffer buffer, Range* region)
    MatchBufferRegion = (Buffer buffer, BufferRegion source)
    PrimFunc    = (Var* params, stmt body, ret_type, map<Var, Buffer> buffer_map, map attrs)
    IRModule    = (map<str, PrimFunc> functions, map attrs)

Every node is an ``attrs`` frozen record: ``==`` is exact equality (names
included), hashing is cached, sequences are ``pvector`` and mappings ``pmap``.
Rules about one node are checked when it is built and raise ``NodeError``;
rules that span a tree live in ``tirfun.analysis.verify``.
"""

from .base import Node
from .buffer import Buffer, BufferRegion, MatchBufferRegion, Range
from .dtype import DataType, dtype_of
from .expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Broadcast, BufferLoad, Call, Cast, CmpOp, Div,
    FloatImm, FloorDiv, FloorMod, IntImm, Let, LogicOp, Max, Min, Mod, Mul, Not, Or, PrimExpr,
    GlobalVar, PointerType, Ramp, Select, Shuffle, StringImm, Sub, Var, binary, const, to_expr,
)
from .extra_stmt import AllocateConst, BufferRealize, Prefetch, While
from .func import IRModule, PrimFunc
from .stmt import (
    THREAD_TAGS, Allocate, AssertStmt, AttrStmt, Block, BlockRealize, BufferStore, DeclBuffer,
    Evaluate, For, ForKind, IfThenElse, IterVar, IterVarType, LetStmt, SeqStmt, Stmt,
)

__all__ = [
    "Node", "DataType", "dtype_of",
    "PrimExpr", "Var", "IntImm", "FloatImm", "StringImm", "BinaryOp", "CmpOp", "LogicOp",
    "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
    "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Select", "Cast", "BufferLoad",
    "Call", "GlobalVar", "PointerType", "Ramp", "Broadcast", "Shuffle", "Let", "binary", "const", "to_expr",
    "Buffer", "Range", "BufferRegion", "MatchBufferRegion",
    "Stmt", "BufferStore", "ForKind", "For", "SeqStmt", "IfThenElse", "Evaluate", "LetStmt",
    "AttrStmt", "AssertStmt", "Allocate", "DeclBuffer", "IterVarType", "IterVar", "Block",
    "BlockRealize", "THREAD_TAGS", "While", "AllocateConst", "BufferRealize", "Prefetch",
    "PrimFunc", "IRModule",
]
