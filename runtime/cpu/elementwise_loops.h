/*
 * elementwise_loops.h -- the loops of the elementwise kernels, for every
 * compute type (elementwise_kernels.h's float and double, elementwise.c's
 * int64): one op over n elements with element strides, with the stride-1
 * and scalar-broadcast (stride 0) cases in loops of their own so that the
 * compiler can vectorise them.  At the point of use, EW_T is the compute
 * type and o, so, a, sa (and b, sb), n are in scope; OT is the output's
 * element type and EXPR the formula in x (and y).
 */
#ifndef CH_ELEMENTWISE_LOOPS_H
#define CH_ELEMENTWISE_LOOPS_H

#define EW_BIN_LOOP(OT, EXPR)                                                   \
    do {                                                                        \
        OT *o_ = (OT *)o;                                                       \
        if (so == 1 && sa == 1 && sb == 1) {                                    \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i], y = b[i];                                        \
                o_[i] = (OT)(EXPR);                                             \
            }                                                                   \
        } else if (so == 1 && sa == 1 && sb == 0) {                             \
            const EW_T y = b[0];                                                \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i];                                                  \
                o_[i] = (OT)(EXPR);                                             \
            }                                                                   \
        } else if (so == 1 && sa == 0 && sb == 1) {                             \
            const EW_T x = a[0];                                                \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T y = b[i];                                                  \
                o_[i] = (OT)(EXPR);                                             \
            }                                                                   \
        } else {                                                                \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i * sa], y = b[i * sb];                              \
                o_[i * so] = (OT)(EXPR);                                        \
            }                                                                   \
        }                                                                       \
    } while (0)

#define EW_UN_LOOP(OT, EXPR)                                                    \
    do {                                                                        \
        OT *o_ = (OT *)o;                                                       \
        if (so == 1 && sa == 1) {                                               \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i];                                                  \
                o_[i] = (OT)(EXPR);                                             \
            }                                                                   \
        } else {                                                                \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i * sa];                                             \
                o_[i * so] = (OT)(EXPR);                                        \
            }                                                                   \
        }                                                                       \
    } while (0)

/* The comparisons and logical ops, the same in every compute type (a bool
 * output): case labels for a binary kernel's op switch. */
#define EW_COMPARISON_CASES                                                     \
    case CH_EQ: EW_BIN_LOOP(uint8_t, x == y); break;                            \
    case CH_NE: EW_BIN_LOOP(uint8_t, x != y); break;                            \
    case CH_LT: EW_BIN_LOOP(uint8_t, x < y); break;                             \
    case CH_LE: EW_BIN_LOOP(uint8_t, x <= y); break;                            \
    case CH_GT: EW_BIN_LOOP(uint8_t, x > y); break;                             \
    case CH_GE: EW_BIN_LOOP(uint8_t, x >= y); break;                            \
    case CH_LOGICAL_AND: EW_BIN_LOOP(uint8_t, (x != 0) & (y != 0)); break;      \
    case CH_LOGICAL_OR: EW_BIN_LOOP(uint8_t, (x != 0) | (y != 0)); break;       \
    case CH_LOGICAL_XOR: EW_BIN_LOOP(uint8_t, (x != 0) ^ (y != 0)); break;

#endif
