/*
 * chainlua_ops.h -- the op list: every enumerated code of the public API,
 * written once.
 *
 * Each list is an X-macro: LIST(X) calls X(ID, name) once per entry, in code
 * order (the first entry is 0).  From these lists come
 *   - the C enums of chainlua.h (CH_<ID>, via CH_OP_ENUM),
 *   - the C name tables (CH_OP_NAME), checked against the counts with
 *     static asserts where they are defined,
 *   - lua/chainer/_ffi.lua's enums and lua/chainer/_ops.lua's name-to-code
 *     tables, both written by scripts/gen-ffi.lua (`make ffi`); the spec
 *     spec/core/generated_spec.lua fails when a generated file is stale.
 * So adding an op is one line here; nothing in Lua writes a code by hand.
 *
 * Format rules (gen-ffi.lua parses this file): one `#define CH_<LIST>(X)`
 * per list, entries `X(ID, name)` separated by line continuations, nothing
 * else inside a list.
 */
#ifndef CHAINLUA_OPS_H
#define CHAINLUA_OPS_H

/* Element types, in the promotion lattice's order (ch_promote relies on it). */
#define CH_DTYPE_LIST(X) \
    X(BOOL, bool)        \
    X(INT8, int8)        \
    X(UINT8, uint8)      \
    X(INT16, int16)      \
    X(INT32, int32)      \
    X(INT64, int64)      \
    X(FLOAT16, float16)  \
    X(FLOAT32, float32)  \
    X(FLOAT64, float64)

/* Unary elementwise ops (ch_unary).  The last four give bool. */
#define CH_UNARY_OP_LIST(X)    \
    X(NEG, neg)                \
    X(ABS, abs)                \
    X(SIGN, sign)              \
    X(RECIPROCAL, reciprocal)  \
    X(EXP, exp)                \
    X(EXPM1, expm1)            \
    X(EXP2, exp2)              \
    X(LOG, log)                \
    X(LOG1P, log1p)            \
    X(LOG2, log2)              \
    X(LOG10, log10)            \
    X(SQRT, sqrt)              \
    X(RSQRT, rsqrt)            \
    X(SQUARE, square)          \
    X(CBRT, cbrt)              \
    X(SIN, sin)                \
    X(COS, cos)                \
    X(TAN, tan)                \
    X(ARCSIN, arcsin)          \
    X(ARCCOS, arccos)          \
    X(ARCTAN, arctan)          \
    X(SINH, sinh)              \
    X(COSH, cosh)              \
    X(TANH, tanh)              \
    X(ARCSINH, arcsinh)        \
    X(ARCCOSH, arccosh)        \
    X(ARCTANH, arctanh)        \
    X(ERF, erf)                \
    X(ERFC, erfc)              \
    X(FLOOR, floor)            \
    X(CEIL, ceil)              \
    X(TRUNC, trunc)            \
    X(RINT, rint)              \
    X(SIGMOID, sigmoid)        \
    X(RELU, relu)              \
    X(SOFTPLUS, softplus)      \
    X(LGAMMA, lgamma)          \
    X(DIGAMMA, digamma)        \
    X(ERFINV, erfinv)          \
    X(NDTR, ndtr)              \
    X(NDTRI, ndtri)            \
    X(LOG_NDTR, log_ndtr)      \
    X(ERFCINV, erfcinv)        \
    X(ERFCX, erfcx)            \
    X(LOGICAL_NOT, logical_not) \
    X(ISNAN, isnan)            \
    X(ISINF, isinf)            \
    X(ISFINITE, isfinite)

/* Binary elementwise ops (ch_binary, ch_binary_scalar).  From EQ on they
 * give bool. */
#define CH_BINARY_OP_LIST(X)       \
    X(ADD, add)                    \
    X(SUB, sub)                    \
    X(MUL, mul)                    \
    X(DIV, div)                    \
    X(FLOOR_DIVIDE, floor_divide)  \
    X(MOD, mod)                    \
    X(FMOD, fmod)                  \
    X(POW, pow)                    \
    X(MAXIMUM, maximum)            \
    X(MINIMUM, minimum)            \
    X(ARCTAN2, arctan2)            \
    X(HYPOT, hypot)                \
    X(ZETA, zeta)                  \
    X(POLYGAMMA, polygamma)        \
    X(EQ, eq)                      \
    X(NE, ne)                      \
    X(LT, lt)                      \
    X(LE, le)                      \
    X(GT, gt)                      \
    X(GE, ge)                      \
    X(LOGICAL_AND, logical_and)    \
    X(LOGICAL_OR, logical_or)      \
    X(LOGICAL_XOR, logical_xor)

/* Reductions (ch_reduce). */
#define CH_REDUCE_OP_LIST(X)         \
    X(SUM, sum)                      \
    X(MEAN, mean)                    \
    X(PROD, prod)                    \
    X(MAX, max)                      \
    X(MIN, min)                      \
    X(ARGMAX, argmax)                \
    X(ARGMIN, argmin)                \
    X(VAR, var)                      \
    X(STD, std)                      \
    X(LOGSUMEXP, logsumexp)          \
    X(ALL, all)                      \
    X(ANY, any)                      \
    X(COUNT_NONZERO, count_nonzero)

/* Padding modes (ch_pad). */
#define CH_PAD_MODE_LIST(X)   \
    X(PAD_CONSTANT, constant) \
    X(PAD_EDGE, edge)         \
    X(PAD_REFLECT, reflect)

/* Activation gradients from the output (ch_activation_grad). */
#define CH_ACT_GRAD_OP_LIST(X) \
    X(ACT_RELU, relu)          \
    X(ACT_SIGMOID, sigmoid)    \
    X(ACT_TANH, tanh)

/* Recurrent cells (ch_rnn_seq_forward/backward). */
#define CH_RNN_CELL_LIST(X) \
    X(RNN_TANH, tanh)       \
    X(RNN_RELU, relu)       \
    X(RNN_LSTM, lstm)       \
    X(RNN_GRU, gru)

/* Makers for the lists above. */
#define CH_OP_ENUM(ID, name) CH_##ID,
#define CH_OP_NAME(ID, name) #name,
#define CH_OP_COUNT(ID, name) +1

#endif
