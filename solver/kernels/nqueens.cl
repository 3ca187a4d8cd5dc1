// N-Queens completion kernels: every work-item takes states from a global atomic counter and
// counts all completions of each with 64-bit sums. The kernels fill rows top to bottom with
// 32-bit masks: cols (occupied columns), ld/rd (diagonals shifted to the next row), computed on
// the host from the absolute masks of permenum/problems/nqueens.py; lds also fills around the
// border queens of the dihedral mode. lds64 reads the absolute masks themselves.
//
// Build options: -DSTACK=<rows left> sizes the private stacks; -DCOUNT_NODES also writes the
// number of search nodes per state (a separate build: it costs time in the hot loop).

#ifndef STACK
#define STACK 32
#endif

inline uint nq_full(const uint n) { return n >= 32u ? 0xffffffffu : ((1u << n) - 1u); }

// Plain bitmask depth-first search: lowest free bit first, popcount at the last row.
__kernel void nqueens_dfs(const uint n, const uint depth, const uint nstates,
                          __global const uint *cols_in, __global const uint *ld_in,
                          __global const uint *rd_in, __global ulong *counts,
                          __global ulong *nodes, volatile __global uint *next)
{
    const uint full = nq_full(n);
    const int rows_left = (int)n - (int)depth;
    uint sa[STACK], sc[STACK], sl[STACK], sr[STACK];
    for (;;) {
        const uint i = atomic_inc(next);
        if (i >= nstates) break;
        uint c = cols_in[i], l = ld_in[i], r = rd_in[i];
        ulong cnt = 0, nd = 1;
        if (rows_left <= 0) {
            cnt = 1;
        } else {
            int d = 0;
            uint a = ~(c | l | r) & full;
            for (;;) {
                if (d == rows_left - 1) {
                    const uint p = popcount(a);
                    cnt += p;
                    nd += p;
                } else if (a) {
                    const uint bit = a & (~a + 1u);
                    a ^= bit;
                    sa[d] = a; sc[d] = c; sl[d] = l; sr[d] = r;
                    ++d;
                    c |= bit;
                    l = ((l | bit) << 1) & full;
                    r = (r | bit) >> 1;
                    a = ~(c | l | r) & full;
                    ++nd;
                    continue;
                }
                if (d == 0) break;
                --d;
                a = sa[d]; c = sc[d]; l = sl[d]; r = sr[d];
            }
        }
        counts[i] = cnt;
#ifdef COUNT_NODES
        nodes[i] = nd;
#endif
    }
}

// DoubleSweep-Light: the same row order, plus, after every placement,
//  (1) a sweep over all remaining rows: if any has no free square left (counting only the
//      queens already placed), the node is dead and is not entered;
//  (2) propagation of unit rows: while the next row has exactly one free square, the queen is
//      placed there directly, without a stack push or a branch.
__kernel void nqueens_dsl(const uint n, const uint depth, const uint nstates,
                          __global const uint *cols_in, __global const uint *ld_in,
                          __global const uint *rd_in, __global ulong *counts,
                          __global ulong *nodes, volatile __global uint *next)
{
    const uint full = nq_full(n);
    const int last = (int)n - 1;
    uint sa[STACK], sc[STACK], sl[STACK], sr[STACK];
    int srow[STACK];
    for (;;) {
        const uint i = atomic_inc(next);
        if (i >= nstates) break;
        uint c = cols_in[i], l = ld_in[i], r = rd_in[i];
        ulong cnt = 0, nd = 1;
        int row = (int)depth;
        if (row > last) {
            cnt = 1;
        } else {
            int d = 0;
            uint a = ~(c | l | r) & full;
            for (;;) {
                if (row == last) {
                    const uint p = popcount(a);
                    cnt += p;
                    nd += p;
                } else if (a) {
                    const uint bit = a & (~a + 1u);
                    a ^= bit;
                    sa[d] = a; sc[d] = c; sl[d] = l; sr[d] = r; srow[d] = row;
                    ++d;
                    uint b = bit;
                    for (;;) {  // place b on `row`, then propagate unit rows
                        c |= b;
                        l = ((l | b) << 1) & full;
                        r = (r | b) >> 1;
                        ++row;
                        ++nd;
                        a = ~(c | l | r) & full;
                        if (row == last) break;
                        uint ok = a;
                        for (int j = 1; ok && j <= last - row; ++j)
                            ok = ~(c | (l << j) | (r >> j)) & full;
                        if (!ok) { a = 0; break; }
                        if (a & (a - 1u)) break;  // two or more choices: branch
                        b = a;                    // a unit row: place it directly
                    }
                    if (a) continue;
                }
                if (d == 0) break;
                --d;
                a = sa[d]; c = sc[d]; l = sl[d]; r = sr[d]; row = srow[d];
            }
        }
        counts[i] = cnt;
#ifdef COUNT_NODES
        nodes[i] = nd;
#endif
    }
}

// GPU-shaped DFS: the per-level stack lives in __local memory laid out [depth][lane], so the
// lanes of a wavefront touching one depth hit consecutive words (no bank conflicts, whatever
// the depths). Per level it keeps the candidates left, the bit placed (cols is undone by XOR),
// ld and rd. (Undoing ld by a shift alone miscounted for N >= 21 -- the bit that the shift drops
// at the top is lost -- and saved no time: bench/NOTES.md. PACKED below keeps that bit, and rd's
// at the bottom, so its shifts undo exactly.) Launched with a fixed work-group size WG.
//
// Rows row0..last of each state are its levels (span = row0 | last << 8; span 0xffff: complete).
// With BORDER (the dihedral mode), some of those rows already hold a border queen (forced: the
// row's only candidate is its column, bit r of fl: column 0, of fr: column n-1), and queens below
// row0 attack upwards along lines that reach the board only later: bit r of e1 (e2) says a "\"
// ("/") line enters column 0 (n-1) at row r. Lines already on the board at row0 are in ld/rd.
// Forced queens never conflict: the border is checked on the host, and every line through a
// forced queen that can reach a row above it is in the masks from the start.
#ifndef WG
#define WG 64
#endif
#ifndef BORDER
#define BORDER 0
#endif
// PACKED (n <= 30): 2 words per level -- ld and rd are undone by shifts, and the one bit each
// shift drops is kept in the top two bits of the candidates word -- half the __local memory
// of the 4-word stack, so more work-groups fit on a compute unit.
#ifndef PACKED
#define PACKED 0
#endif
// LAST_TWO: a candidate of the next-to-last row is counted in place (popcount of the last row's
// free squares after it), one candidate per pass: no push, no pop, no pass for the last row.
#ifndef LAST_TWO
#define LAST_TWO 0
#endif
// The head of a search step, shared by lds and lds64: with LAST_TWO a candidate `bit` of the
// next-to-last row is taken and LAST_ROW_COUNT (the last row's free squares after it) counted in
// place; without, the last row is counted when reached. Either way it opens the push branch.
#if LAST_TWO
#define STEP_HEAD(LAST_ROW_COUNT)            \
    if (a && d == last - 1) {               \
        const uint bit = a & (~a + 1u);     \
        a ^= bit;                           \
        const uint p = (LAST_ROW_COUNT);    \
        cnt += p;                           \
        nd += 1 + p;                        \
        continue;                           \
    }                                       \
    if (a)
#else
#define STEP_HEAD(LAST_ROW_COUNT)            \
    if (d == last) {                        \
        const uint p = popcount(a);         \
        cnt += p;                           \
        nd += p;                            \
    } else if (a)
#endif
// With LAST_TWO the loop starts at the next-to-last row: a state with one row left is counted first.
#if LAST_TWO
#define COUNT_IF_ONE_ROW              \
    if (last == 0) {                  \
        cnt = popcount(a);            \
        nd += cnt;                    \
        a = 0;                        \
    }
#else
#define COUNT_IF_ONE_ROW
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_lds(const uint n, const uint nstates,
                 __global const uint *cols_in, __global const uint *ld_in,
                 __global const uint *rd_in, __global const uint *span_in,
                 __global const uint *fl_in, __global const uint *fr_in,
                 __global const uint *e1_in, __global const uint *e2_in,
                 __global ulong *counts, __global ulong *nodes, volatile __global uint *next)
{
    __local uint s_a[STACK * WG];
    __local uint s_b[STACK * WG];
#if !PACKED
    __local uint s_l[STACK * WG];
    __local uint s_r[STACK * WG];
#endif
    const uint lane = get_local_id(0);
    const uint full = nq_full(n);
    const uint hi = 1u << (n - 1u);
    for (;;) {
        const uint i = atomic_inc(next);
        if (i >= nstates) break;
        uint c = cols_in[i], l = ld_in[i], r = rd_in[i];
        const uint span = span_in[i];
        ulong cnt = 0, nd = 1;
        if (span == 0xffffu) {
            cnt = 1;
        } else {
            const uint row0 = span & 0xffu;
            const int last = (int)(span >> 8) - (int)row0;  // level of the last row to fill
#if BORDER
            // event masks by level (bit d: row row0 + d)
            const uint fl = fl_in[i] >> row0, fr = fr_in[i] >> row0;
            const uint e1 = e1_in[i] >> row0, e2 = e2_in[i] >> row0;
            const uint ev = fl | fr | e1 | e2;
            // a side queen still to come reserves its column through `allowed`, not through c:
            // c is undone by XOR, and the forced placement sets that column in c itself
            const uint reserved = (fl ? 1u : 0u) | (fr ? hi : 0u);
            const uint allowed = full & ~reserved;
            c &= ~reserved;
#else
            const uint allowed = full;
#endif
            int d = 0;
            uint a = ~(c | l | r) & allowed;
#if LAST_TWO
#if BORDER
            const uint inj_l = (e1 >> last) & 1u, inj_r = ((e2 >> last) & 1u) << (n - 1u);
            const uint forced_last = ((fl | fr) >> last) & 1u;
#else
            const uint inj_l = 0u, inj_r = 0u, forced_last = 0u;
#endif
#endif
            COUNT_IF_ONE_ROW
            for (;;) {
                STEP_HEAD(forced_last ? 1u : popcount(~(c | bit | (((l | bit) << 1) & full) | inj_l |
                                                        ((r | bit) >> 1) | inj_r) & allowed)) {
                    const uint bit = a & (~a + 1u);
#if PACKED
                    const uint lb = l | bit, rb = r | bit;
                    s_a[d * WG + lane] = (a ^ bit) | ((lb >> (n - 1u)) << 31) | ((rb & 1u) << 30);
                    s_b[d * WG + lane] = bit;
                    l = (lb << 1) & full;
                    r = rb >> 1;
#else
                    s_a[d * WG + lane] = a ^ bit;
                    s_b[d * WG + lane] = bit;
                    s_r[d * WG + lane] = r;
                    s_l[d * WG + lane] = l;
                    l = ((l | bit) << 1) & full;
                    r = (r | bit) >> 1;
#endif
                    ++d;
                    c |= bit;
                    a = ~(c | l | r) & allowed;
#if BORDER
                    if ((ev >> d) & 1u) {
                        l |= (e1 >> d) & 1u;
                        r |= ((e2 >> d) & 1u) << (n - 1u);
                        a = ~(c | l | r) & allowed;
                        if ((fl >> d) & 1u) a = 1u;
                        if ((fr >> d) & 1u) a = hi;
                    }
#endif
                    ++nd;
                    continue;
                }
                if (d == 0) break;
                --d;
                const uint bit = s_b[d * WG + lane];
#if PACKED
                const uint w = s_a[d * WG + lane];
                a = w & full;
                l = ((l >> 1) | ((w >> 31) << (n - 1u))) ^ bit;
                r = (((r << 1) & full) | ((w >> 30) & 1u)) ^ bit;
#if BORDER
                // a forced queen's own lines were in ld and rd before it was placed: put them back
                const uint own = ((fl | fr) >> d) & 1u ? bit : 0u;
                l |= own;
                r |= own;
#endif
#else
                a = s_a[d * WG + lane];
                l = s_l[d * WG + lane];
                r = s_r[d * WG + lane];
#endif
                c ^= bit;
            }
        }
        counts[i] = cnt;
#ifdef COUNT_NODES
        nodes[i] = nd;
#endif
    }
}

// Absolute masks: d1 bit c - r + n - 1 and d2 bit c + r are the diagonals through (r, c), 64 bits
// each, so the queens placed below the open rows (the border of the dihedral mode) block their
// diagonals from the start. Square (r, c) is free iff bit c of cols | d1 >> (n-1-r) | d2 >> r is 0.
// A placement is undone exactly by XOR: the stack in __local ([depth][lane]) holds 2 words per
// level (candidates left, bit placed); the row is recomputed from the open-row mask.
// LAST_TWO (defined above) works here too.
inline uint nq_free(const uint n, const uint full, const uint c, const ulong d1, const ulong d2, const int row)
{
    return ~(c | (uint)(d1 >> (n - 1u - (uint)row)) | (uint)(d2 >> (uint)row)) & full;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_lds64(const uint n, const uint nstates,
                   __global const uint *cols_in, __global const ulong *d1_in,
                   __global const ulong *d2_in, __global const uint *rows_in,
                   __global ulong *counts, __global ulong *nodes, volatile __global uint *next)
{
    __local uint s_a[STACK * WG];
    __local uint s_b[STACK * WG];
    const uint lane = get_local_id(0);
    const uint full = nq_full(n);
    for (;;) {
        const uint i = atomic_inc(next);
        if (i >= nstates) break;
        const uint open = rows_in[i];
        uint c = cols_in[i];
        ulong d1 = d1_in[i], d2 = d2_in[i];
        ulong cnt = 0, nd = 1;
        if (open == 0) {
            cnt = 1;
        } else {
            const int last = (int)popcount(open) - 1;  // stack level of the last open row
            const int row_last = 31 - (int)clz(open);
            int row = 31 - (int)clz(open & (~open + 1u));
            int d = 0;
            uint a = nq_free(n, full, c, d1, d2, row);
            COUNT_IF_ONE_ROW
            for (;;) {
                STEP_HEAD(popcount(nq_free(n, full, c | bit, d1 | ((ulong)bit << (n - 1u - (uint)row)),
                                           d2 | ((ulong)bit << (uint)row), row_last))) {
                    const uint bit = a & (~a + 1u);
                    s_a[d * WG + lane] = a ^ bit;
                    s_b[d * WG + lane] = bit;
                    c |= bit;
                    d1 |= (ulong)bit << (n - 1u - (uint)row);
                    d2 |= (ulong)bit << (uint)row;
                    const uint below = open & (0xfffffffeu << (uint)row);  // open rows after this one
                    row = 31 - (int)clz(below & (~below + 1u));
                    ++d;
                    a = nq_free(n, full, c, d1, d2, row);
                    ++nd;
                    continue;
                }
                if (d == 0) break;
                --d;
                row = 31 - (int)clz(open & ((1u << (uint)row) - 1u));  // the open row above
                const uint bit = s_b[d * WG + lane];
                a = s_a[d * WG + lane];
                c ^= bit;
                d1 ^= (ulong)bit << (n - 1u - (uint)row);
                d2 ^= (ulong)bit << (uint)row;
            }
        }
        counts[i] = cnt;
#ifdef COUNT_NODES
        nodes[i] = nd;
#endif
    }
}
