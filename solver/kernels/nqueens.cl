// N-Queens completion kernels: every work-item takes states from a global atomic counter and
// counts all completions of each with 64-bit sums. Rows are filled top to bottom with 32-bit
// masks: cols (occupied columns), ld/rd (diagonals shifted to the next row).
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
