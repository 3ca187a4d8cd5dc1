// N-Queens completion kernels: every work-item takes states from a global atomic counter and
// counts all completions of each with 64-bit sums. The kernels dfs, dsl and lds fill the rows
// below a block of placed rows with 32-bit masks: cols (occupied columns), ld/rd (diagonals
// shifted to the next row). lds64 takes the absolute masks of permenum/problems/nqueens.py
// (any set of open rows: the dihedral mode's border queens sit in the last row and in between).
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
// ld and rd. (Undoing ld by a shift instead of storing it miscounted on NVIDIA's OpenCL for
// N >= 21 while PoCL was exact, and saved no time: bench/NOTES.md.) Launched with a fixed
// work-group size WG.
#ifndef WG
#define WG 64
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_lds(const uint n, const uint depth, const uint nstates,
                 __global const uint *cols_in, __global const uint *ld_in,
                 __global const uint *rd_in, __global ulong *counts,
                 __global ulong *nodes, volatile __global uint *next)
{
    __local uint s_a[STACK * WG];
    __local uint s_b[STACK * WG];
    __local uint s_l[STACK * WG];
    __local uint s_r[STACK * WG];
    const uint lane = get_local_id(0);
    const uint full = nq_full(n);
    const int last = (int)n - (int)depth - 1;  // stack level of the board's last row
    for (;;) {
        const uint i = atomic_inc(next);
        if (i >= nstates) break;
        uint c = cols_in[i], l = ld_in[i], r = rd_in[i];
        ulong cnt = 0, nd = 1;
        if (last < 0) {
            cnt = 1;
        } else {
            int d = 0;
            uint a = ~(c | l | r) & full;
            for (;;) {
                if (d == last) {
                    const uint p = popcount(a);
                    cnt += p;
                    nd += p;
                } else if (a) {
                    const uint bit = a & (~a + 1u);
                    s_a[d * WG + lane] = a ^ bit;
                    s_b[d * WG + lane] = bit;
                    s_r[d * WG + lane] = r;
                    s_l[d * WG + lane] = l;
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
                const uint bit = s_b[d * WG + lane];
                a = s_a[d * WG + lane];
                c ^= bit;
                l = s_l[d * WG + lane];
                r = s_r[d * WG + lane];
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
// With LAST_TWO, a candidate of the next-to-last open row is counted in place (popcount of the
// last row's free squares after it), one candidate per loop pass: no push, no pop, no extra pass.
#ifndef LAST_TWO
#define LAST_TWO 1
#endif
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
            if (last == 0) {
                cnt = popcount(a);
                nd += cnt;
                a = 0;
            }
            for (;;) {
#if LAST_TWO
                if (a) {
                    const uint bit = a & (~a + 1u);
                    a ^= bit;
                    ++nd;
                    if (d == last - 1) {
                        const uint p = popcount(nq_free(n, full, c | bit, d1 | ((ulong)bit << (n - 1u - (uint)row)),
                                                        d2 | ((ulong)bit << (uint)row), row_last));
                        cnt += p;
                        nd += p;
                        continue;
                    }
                    s_a[d * WG + lane] = a;
                    s_b[d * WG + lane] = bit;
                    c |= bit;
                    d1 |= (ulong)bit << (n - 1u - (uint)row);
                    d2 |= (ulong)bit << (uint)row;
                    const uint below = open & (0xfffffffeu << (uint)row);  // open rows after this one
                    row = 31 - (int)clz(below & (~below + 1u));
                    ++d;
                    a = nq_free(n, full, c, d1, d2, row);
                    continue;
                }
#else
                if (d == last) {
                    const uint p = popcount(a);
                    cnt += p;
                    nd += p;
                } else if (a) {
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
#endif
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
