// N-Queens completion kernels: every work-item takes states from a global atomic counter and
// counts all completions of each with 64-bit sums. The kernels fill rows top to bottom with
// 32-bit masks: cols (occupied columns), ld/rd (diagonals shifted to the next row), computed on
// the host from the absolute masks of permenum/problems/nqueens.py; lds also fills around the
// border queens of the dihedral mode. lds64 reads the absolute masks themselves.
//
// Build options: -DSTACK=<rows left> sizes the private stacks; -DCOUNT_NODES also writes the
// number of search nodes per state (a separate build: it costs time in the hot loop); with
// -DCOUNT_PASSES too, skip writes its passes per state instead (what its dead-child filter saves).

#ifndef STACK
#define STACK 32
#endif

inline uint nq_full(const uint n) { return n >= 32u ? 0xffffffffu : ((1u << n) - 1u); }

// The kernels' inputs, one work-item per state, from the pool's absolute masks (so the host only
// uploads columns it already holds): cols, ld and rd of the first open row row0 (ld = d1 >> (n-1-row0),
// rd = d2 >> row0, both cut to the board); for lds, fused and skip also span = row0 | last << 8 (0xffff:
// complete). With dihedral (queens below the open rows) the border comes in one of two layouts:
// * EVENTS (lds, fused): the border events of rows row0 < r <= last: fl/fr bit r: the side queen of
//   column 0 / n-1 sits on row r; e1 bit r: a "\" line enters column 0 at row r (bit n-1-r of d1);
//   e2 bit r: a "/" line enters column n-1 at row r (bit n-1+r of d2).
// * TABLE (skip, fused-t): the queens below row0 as one word in fl -- bottom column | left row << 8 |
//   right row << 16 (0xff: that side queen is not below row0) -- from which the kernel writes each
//   level's squares attacked from below into a table (BUILD_TABLE). A side queen below row0 is then
//   placed like any other queen when its row comes, so its column is left out of cols and its line
//   towards its own square (the left queen's "/", the right queen's "\") out of rd / ld.
#define LAYOUT_TOP_DOWN 0u
#define LAYOUT_EVENTS 1u
#define LAYOUT_TABLE 2u
// * EDGES (skip, the edges mode): top-down masks; fl = t | row of column 0's queen << 8 | row of column
//   n-1's queen << 16 (0xff: not placed yet; a corner state, t = 0, has c1 there), read from the
//   prefix matrix (width columns per state) that comes in side_l.
#define LAYOUT_EDGES 3u
__kernel void nqueens_prepare(const uint n, const uint layout, const uint nstates, const uint width,
                              __global const uint *cols, __global const ulong *d1, __global const ulong *d2,
                              __global const uint *rows, __global const uchar *side_l, __global const uchar *side_r,
                              __global const uchar *bottom,
                              __global uint *c_out, __global uint *ld_out, __global uint *rd_out,
                              __global uint *span_out, __global uint *fl_out, __global uint *fr_out,
                              __global uint *e1_out, __global uint *e2_out)
{
    const uint i = get_global_id(0);
    if (i >= nstates) return;
    const uint full = nq_full(n);
    const uint open = rows[i];
    const uint row0 = open ? 31u - clz(open & (~open + 1u)) : 0u;
    const uint border = layout == LAYOUT_EVENTS || layout == LAYOUT_TABLE;
    const uint last = border ? n - 2u : n - 1u;  // the dihedral mode's bottom row is placed
    const uint sl = border ? side_l[i] : 0u, sr = border ? side_r[i] : 0u;
    const bool left_below = open && border && sl > row0 && sl <= last;
    const bool right_below = open && border && sr > row0 && sr <= last;
    uint c = cols[i];
    ulong dl = d1[i], dr = d2[i];
    if (layout == LAYOUT_TABLE) {
        c &= ~((left_below ? 1u : 0u) | (right_below ? 1u << (n - 1u) : 0u));
        dr &= left_below ? ~(1ul << sl) : ~0ul;                     // the left queen's "/" line
        dl &= right_below ? ~(1ul << (2u * n - 2u - sr)) : ~0ul;    // the right queen's "\" line
    }
    c_out[i] = c;
    ld_out[i] = (uint)(dl >> (n - 1u - row0)) & full;
    rd_out[i] = (uint)(dr >> row0) & full;
    span_out[i] = open ? row0 | (last << 8) : 0xffffu;
    uint fl = 0u, fr = 0u, e1 = 0u, e2 = 0u;
    if (layout == LAYOUT_EVENTS && open) {
        for (uint r = row0 + 1u; r <= last; ++r) {
            e1 |= (uint)((dl >> (n - 1u - r)) & 1u) << r;
            e2 |= (uint)((dr >> (n - 1u + r)) & 1u) << r;
        }
        fl = left_below ? 1u << sl : 0u;
        fr = right_below ? 1u << sr : 0u;
    } else if (layout == LAYOUT_TABLE) {
        fl = (uint)bottom[i] | (left_below ? sl : 0xffu) << 8 | (right_below ? sr : 0xffu) << 16;
    } else if (layout == LAYOUT_EDGES) {
        __global const uchar *p = side_l + (size_t)i * width;
        uint lrow = 0xffu, rrow = 0xffu;
        for (uint j = 0u; j < width; ++j) {
            lrow = (p[j] == 0u && lrow == 0xffu) ? j : lrow;
            rrow = (p[j] == n - 1u && rrow == 0xffu) ? j : rrow;
        }
        rrow = (p[0] == 0u && width > 1u) ? p[1] : rrow;
        fl = (uint)p[0] | lrow << 8 | rrow << 16;
    }
    fl_out[i] = fl; fr_out[i] = fr; e1_out[i] = e1; e2_out[i] = e2;
}

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
// PERSIST (default 1): a work-item that finishes a state takes the next one inside the search
// loop. With a loop per state (PERSIST 0) a lane that finishes early waits at the loop's exit
// until every lane of its warp has finished too: a warp then moves through its states in lockstep
// batches, each as long as the largest subtree of the batch.
#ifndef PERSIST
#define PERSIST 1
#endif
// Sets up state i: its masks, the level of its last row, with BORDER its event masks by level
// (bit d: row row0 + d); a complete state (span 0xffff) has nothing to search and counts 1.
// FINISH: the kernel's own set-up of a state that has rows left.
// TABLE (skip, fused-t; the prepare kernel's TABLE layout): with BORDER, each level's squares
// attacked by the queens below row0 (and the side columns they hold) are written once per state into
// a __local table tab[level * WG] (~full included), read once per pass instead of per-pass event
// selects. A side queen's own row is blocked everywhere but its square (~1u or ~hi): it is placed
// there like any other queen, its column and downward lines then follow through cols, ld and rd.
#ifndef TABLE
#define TABLE 0
#endif
// EDGES (skip, the edges mode of permenum/problems/nqueens.py, top-down): the mode's bounds from t (row 0's
// column): columns 0 and n-1 are ruled out above row t and below row n-1-t, the last row outside columns
// t..n-1-t (eband); row n-1-t must take column 0 / n-1 while that column is empty. A corner state (t = 0)
// rules out column 1 on rows <= c1. The bounds are computed in registers each pass -- level k is inside
// when (uint)(k - ein) <= espan, and then has ewin ruled out, else ewout -- so the stack keeps 4 words per
// level (a per-level __local table of them, a fifth word, was 2.7% slower at N=21: bench/NOTES.md).
// lrow / rrow: the level of column 0's / n-1's queen, valid while cols holds that column (a pop to
// above it leaves cols without it; placing it again sets it). Leaves are weighted by nq_edge_leaf.
#ifndef EDGES
#define EDGES 0
#endif
#ifndef EDGE_FORCING  // 0: row n-1-t is not forced in the kernel (exact either way: forcing only prunes)
#define EDGE_FORCING 1
#endif
#define EDGE_BOUND(k) ((uint)((int)(k) - ein) <= espan ? ewin : ewout)
// The squares level k rules out after queens cols: on the forced row (level eforce, the last inside
// level, whose bound is none) every column but 0 and n-1 while one of them is empty (so the row keeps
// the empty ones: both when both are empty -- exact, the column left empty is found unfillable further
// down; killing that case here saved 1.1% of the nodes at N=15, not kept: bench/NOTES.md), else the
// level's bound. One select on a predicate (& not &&: NVIDIA's compiler made && a branch).
#define EDGE_RULED_OUT(k, cols)                                                     \
    ((EDGE_FORCING & ((int)(k) == eforce) & ((~(cols) & (1u | hi)) != 0u)) ? full & ~(1u | hi) : EDGE_BOUND(k))
#define HAS_TABLE (BORDER && TABLE)
// a leaf's last-row candidates: the edges mode keeps its band there
#if EDGES
#define LEAF_MASK(na) ((na) & eband)
#else
#define LEAF_MASK(na) (na)
#endif
#if !EDGES
#define LEAF_COUNT(na) popcount(na)
#define EDGE_PARAMS
#endif
#if EDGES
// t, its tie masks and weight, the side rows; the bounds: inside rows t..n-1-t (none ruled out; outside:
// columns 0 and n-1), or for a corner rows 0..c1 (column 1 ruled out; outside: none); eforce: the level
// of row n-1-t (-1: none)
#define LOAD_BORDER                                                                 \
    {                                                                               \
        const uint e = fl_in[i], m = n - 1u;                                        \
        et = e & 0xffu;                                                             \
        etie = et == 0u ? 0u : (1u << et) | (1u << (m - et));                      \
        emul = et == 0u ? 1u : 8u;                                                  \
        erow0 = (int)row0;                                                          \
        const uint ea = (e >> 8) & 0xffu, eb = (e >> 16) & 0xffu;                   \
        lrow = (int)ea - (int)row0; rrow = (int)eb - (int)row0;                     \
        ein = et == 0u ? -(int)row0 : (int)et - (int)row0;                          \
        espan = et == 0u ? eb : m - 2u * et;                                        \
        ewin = et == 0u ? 2u : 0u;                                                  \
        ewout = et == 0u ? 0u : 1u | hi;                                            \
        eforce = et == 0u ? -1 : (int)(m - et) - (int)row0;                         \
        eband = et == 0u ? full : ((1u << (m - et + 1u)) - 1u) & ~((1u << et) - 1u); \
        allowed = full & ~EDGE_RULED_OUT(0, c) & (last == 0 ? eband : full);         \
    }
// The weighted completions of a state whose last row has free squares na: a corner state counts
// them (emul 1, weight 8 on the host); otherwise 8 each (emul) unless a border queen ties with t
// (etie: columns / rows t and n-1-t; 0 for a corner), then by the host's table of border_weight
// (edge_weight_masks: for t, l, r the columns b of weight 8, 4, 2, 1) -- a short path, so lanes
// with a tie hold up their warp for a few instructions, not for a loop over the candidates.
// row0 + lrow / rrow: the rows of column 0's and n-1's queens.
inline uint nq_edge_leaf(const uint n, const uint t, const uint etie, const uint emul, const int row0,
                         const int lrow, const int rrow, const uint na, __global const uint4 *wtab)
{
    const uint l = (uint)(row0 + lrow), r = (uint)(row0 + rrow);
    // na == 0: a column 0 or n-1 may still be empty (its row register stale): no table read
    if (na == 0u || ((((etie >> l) | (etie >> r)) & 1u) | (na & etie)) == 0u) return emul * popcount(na);
    const uint4 w = wtab[(t * n + l) * n + r];
    return (popcount(na & w.x) << 3) + (popcount(na & w.y) << 2) + (popcount(na & w.z) << 1) + popcount(na & w.w);
}
#define LEAF_COUNT(na) nq_edge_leaf(n, et, etie, emul, erow0, lrow, rrow, na, wtab)
#define EDGE_PARAMS , __global const uint4 *wtab
#elif BORDER && TABLE
#define LOAD_BORDER                                                                 \
    {                                                                               \
        const uint below = fl_in[i];                                                \
        const uint cb = below & 0xffu, sl = (below >> 8) & 0xffu, sr = (below >> 16) & 0xffu; \
        for (int k = 0; k <= last; ++k) {                                           \
            const uint row = row0 + (uint)k, dist = n - 1u - row;                   \
            uint b = ~full | (cb + dist < n ? 1u << (cb + dist) : 0u) | (cb >= dist ? 1u << (cb - dist) : 0u); \
            b |= sl == 0xffu ? 0u : row == sl ? ~1u : 1u | (1u << (sl > row ? sl - row : row - sl));       \
            b |= sr == 0xffu ? 0u : row == sr ? ~hi : hi | (hi >> (sr > row ? sr - row : row - sr));       \
            tab[k * WG] = b;                                                        \
        }                                                                           \
        allowed = ~tab[0];                                                          \
    }
#elif BORDER
// a side queen still to come reserves its column through `allowed`, not through c: c is undone by
// XOR, and the forced placement sets that column in c itself
#define LOAD_BORDER                                                                 \
    fl = fl_in[i] >> row0; fr = fr_in[i] >> row0;                                   \
    e1 = e1_in[i] >> row0; e2 = e2_in[i] >> row0;                                   \
    ev = fl | fr | e1 | e2;                                                         \
    allowed = full & ~((fl ? 1u : 0u) | (fr ? hi : 0u));                            \
    c &= allowed;
#else
#define LOAD_BORDER
#endif
#if LAST_TWO && BORDER
#define LOAD_LAST_TWO                                                               \
    inj_l = (e1 >> last) & 1u; inj_r = ((e2 >> last) & 1u) << (n - 1u);             \
    forced_last = ((fl | fr) >> last) & 1u;
#else
#define LOAD_LAST_TWO
#endif
#define LOAD_STATE(FINISH)                                                          \
    c = cols_in[i]; l = ld_in[i]; r = rd_in[i];                                     \
    cnt = 0; nd = 1; d = 0;                                                         \
    {                                                                               \
        const uint span = span_in[i];                                               \
        if (span == 0xffffu) {                                                      \
            cnt = 1; a = 0u; last = -1;                                             \
        } else {                                                                    \
            const uint row0 = span & 0xffu;                                         \
            last = (int)(span >> 8) - (int)row0;                                    \
            LOAD_BORDER                                                             \
            a = ~(c | l | r) & allowed;                                             \
            FINISH                                                                  \
        }                                                                           \
    }
// The work-item's variables that LOAD_STATE sets (without BORDER the event masks are constant 0).
#if EDGES
#define BORDER_VARIABLES uint et, etie, emul, espan, ewin, ewout, eband; int erow0, lrow, rrow, ein, eforce;
#elif BORDER && TABLE
#define BORDER_VARIABLES
#elif BORDER
#define BORDER_VARIABLES uint fl, fr, e1, e2, ev;
#else
#define BORDER_VARIABLES const uint fl = 0u, fr = 0u, e1 = 0u, e2 = 0u;
#endif
#define STATE_VARIABLES                    \
    const uint lane = get_local_id(0);     \
    const uint full = nq_full(n);          \
    const uint hi = 1u << (n - 1u);        \
    uint c, l, r, a;                       \
    ulong cnt, nd;                         \
    int d, last;                           \
    uint allowed = full;                   \
    BORDER_VARIABLES
#define STORE_COUNT     \
    counts[i] = cnt;    \
    STORE_NODES
#ifdef COUNT_NODES
#define STORE_NODES nodes[i] = nd;
#else
#define STORE_NODES
#endif
// The inputs of lds and fused (solver/nqueens.py uploads them: shifted masks and border events).
#define EVENTS_KERNEL_PARAMS                                                        \
    const uint n, const uint nstates,                                               \
    __global const uint *cols_in, __global const uint *ld_in,                       \
    __global const uint *rd_in, __global const uint *span_in,                       \
    __global const uint *fl_in, __global const uint *fr_in,                         \
    __global const uint *e1_in, __global const uint *e2_in,                         \
    __global ulong *counts, __global ulong *nodes, volatile __global uint *next EDGE_PARAMS
#if !HAS_TABLE && !EDGES  // lds reads the EVENTS layout only
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_lds(EVENTS_KERNEL_PARAMS)
{
    __local uint s_a[STACK * WG];
    __local uint s_b[STACK * WG];
#if !PACKED
    __local uint s_l[STACK * WG];
    __local uint s_r[STACK * WG];
#endif
    STATE_VARIABLES
#if LAST_TWO
    uint inj_l = 0u, inj_r = 0u, forced_last = 0u;
#endif
    uint i = atomic_inc(next);
    if (i >= nstates) return;
    for (;;) {  // one pass per state (PERSIST 0); with PERSIST the search loop never leaves
        LOAD_STATE(LOAD_LAST_TWO COUNT_IF_ONE_ROW)
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
            if (d == 0) {  // the state is done
#if PERSIST
                STORE_COUNT
                i = atomic_inc(next);
                if (i >= nstates) return;
                LOAD_STATE(LOAD_LAST_TWO COUNT_IF_ONE_ROW)
                continue;
#else
                break;
#endif
            }
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
        STORE_COUNT
        i = atomic_inc(next);
        if (i >= nstates) break;
    }
}

#endif

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

// One candidate per pass, the pop folded in: a pass first backs up one level if the current
// node is exhausted, then takes one candidate and either counts its child (the last rows) or
// descends into it -- every lane of a warp runs the same straight-line step instead of a push
// branch and a pop branch (lds). The stack holds 3 words per level ([depth][lane], __local):
// the level's candidates *including* the one being explored (its lowest bit, so the pop
// recovers the queen and undoes cols by XOR), and the level's ld and rd as they were.
// SKIP_DEAD: a child with no candidate is counted as a node but not entered (no stack traffic).
// LEAF_ROWS 1: the last row is counted by popcount; 2: the last two rows in closed form,
//   |a1||a2| - |a1 & a2| - |(a1 << 1) & a2| - |(a1 >> 1) & a2|
// (a queen of the next-to-last row attacks its column and the two adjacent squares below).
// BORDER as in lds: events and forced rows of level k folded into the next-row masks by selects.
#ifndef SKIP_DEAD
#define SKIP_DEAD 1
#endif
#ifndef LEAF_ROWS
#define LEAF_ROWS 1
#endif
// STORE_ON_DESCENT: the level's slot is written only when the pass descends (else on every pass).
#ifndef STORE_ON_DESCENT
#define STORE_ON_DESCENT 0
#endif
// LOOKAHEAD: a child is not entered either when the row after its own has no free square left.
#ifndef LOOKAHEAD
#define LOOKAHEAD 0
#endif
// masks of level k from the parent's after placing `bit` (ld is not cut to the board: na is)
#if EDGES  // nc: bit is a free column, so c + bit is c | bit (an add can go to the FMA pipe, a LOP3 cannot)
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) + (bit);                                                                 \
    nl = ((l) | (bit)) << 1;                                                          \
    nr = ((r) | (bit)) >> 1;                                                          \
    na = ~(nc | nl | nr | EDGE_RULED_OUT(k, nc)) & full;
#elif BORDER && TABLE
#if LEAF_ROWS != 1 || LOOKAHEAD
#error "TABLE reads level k's row of the table: LEAF_ROWS 1 and no LOOKAHEAD"
#endif
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) | (bit);                                                                 \
    nl = ((l) | (bit)) << 1;                                                          \
    nr = ((r) | (bit)) >> 1;                                                          \
    na = ~(nc | nl | nr | tab[(k) * WG]) & full;
#elif BORDER
// lines entering at k, forced rows
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) | (bit);                                                                 \
    nl = (((l) | (bit)) << 1) | ((e1 >> (k)) & 1u);                                   \
    nr = (((r) | (bit)) >> 1) | (((e2 >> (k)) & 1u) << (n - 1u));                     \
    na = ~(nc | nl | nr) & allowed;                                                   \
    na = ((fl >> (k)) & 1u) ? 1u : na;                                                \
    na = ((fr >> (k)) & 1u) ? hi : na;
#else
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) | (bit);                                                                 \
    nl = ((l) | (bit)) << 1;                                                          \
    nr = ((r) | (bit)) >> 1;                                                          \
    na = ~(nc | nl | nr) & allowed;
#endif
// Completions of the last two rows: a1 the next-to-last row's candidates at level k, from the
// masks nc, nl, nr; the last row sees the queens above it (a queen of row k is handled by the formula).
#if LEAF_ROWS == 2
inline uint nq_last_two(const uint n, const uint full, const uint allowed, const uint hi, const uint k,
                        const uint fl, const uint fr, const uint e1, const uint e2,
                        const uint nc, const uint nl, const uint nr, const uint a1, ulong *nd)
{
    uint c2, l2, r2, a2;  // the last row, no queen placed on row k yet
    NEXT_ROW(k + 1u, 0u, nc, nl, nr, c2, l2, r2, a2)
    const uint ways = popcount(a1) * popcount(a2) - popcount(a1 & a2) - popcount((a1 << 1) & a2) - popcount((a1 >> 1) & a2);
#ifdef COUNT_NODES
    *nd += popcount(a1) + ways;
#endif
    return ways;
}
#endif

// The root's children are counted, not entered: a state with LEAF_ROWS rows or fewer left is counted at load.
#if LEAF_ROWS == 2
#define FUSED_SMALL_STATE                                                                        \
    if (last == 0) { cnt = LEAF_COUNT(a); nd += popcount(a); a = 0u; }                           \
    else if (last == 1) { cnt = nq_last_two(n, full, allowed, hi, 0u, fl, fr, e1, e2, c, l, r, a, &nd); a = 0u; }
#else
#define FUSED_SMALL_STATE \
    if (last == 0) { cnt = LEAF_COUNT(a); nd += popcount(a); a = 0u; }
#endif
#if !EDGES  // the edges mode is skip's
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_fused(EVENTS_KERNEL_PARAMS)
{
    __local uint stack[(3 + TABLE * BORDER) * STACK * WG];  // [word][depth][lane]: candidates, ld, rd; the TABLE
    STATE_VARIABLES
#if TABLE && BORDER
    __local uint *const tab = stack + 3 * STACK * WG + lane;
#endif
    uint acc = 0u;  // completions counted since the last pop
    uint i = atomic_inc(next);
    if (i >= nstates) return;
    LOAD_STATE(FUSED_SMALL_STATE)
    __local uint *top = stack + lane;  // level d's slot: stack + lane + d * WG
    for (;;) {
        if (a == 0u) {
            cnt += acc;  // the 64-bit sum grows here, not at every step
            acc = 0u;
            if (d == 0) {  // the state is done: take the next
                STORE_COUNT
                i = atomic_inc(next);
                if (i >= nstates) return;
                LOAD_STATE(FUSED_SMALL_STATE)
                continue;
            }
            --d;  // back to the parent, minus the queen just explored
            top -= WG;
            const uint w = top[0];
            l = top[STACK * WG];
            r = top[2 * STACK * WG];
            const uint bit = w & (~w + 1u);
            c ^= bit;
            a = w ^ bit;
            if (a == 0u) continue;
        }
        const uint bit = a & (~a + 1u);
        uint nc, nl, nr, na;
        NEXT_ROW((uint)(d + 1), bit, c, l, r, nc, nl, nr, na)
#if !STORE_ON_DESCENT
        // written whether or not the step descends: the slot is only read after a descent
        top[0] = a;
        top[STACK * WG] = l;
        top[2 * STACK * WG] = r;
#endif
        const bool leaf = d == last - LEAF_ROWS;
#if LEAF_ROWS == 2
        ulong leaf_nd = 0;
        const uint p = leaf ? nq_last_two(n, full, allowed, hi, (uint)(d + 1), fl, fr, e1, e2, nc, nl, nr, na, &leaf_nd) : 0u;
#ifdef COUNT_NODES
        nd += leaf_nd;
#endif
#else
        const uint p = leaf ? popcount(na) : 0u;
#ifdef COUNT_NODES
        nd += p;
#endif
#endif
        acc += p;  // between two pops only descents and one level's candidates: no overflow
        ++nd;
#if SKIP_DEAD
        bool down = !leaf && na != 0u;
#else
        bool down = !leaf;
#endif
#if LOOKAHEAD
        // the row after the child's, before the child's own queen: if it is full, so is every
        // grandchild (a forced row always has its queen)
        uint c2, l2, r2, after;
        NEXT_ROW((uint)(d + 2), 0u, nc, nl, nr, c2, l2, r2, after)
        down = down && (d + 2 > last || after != 0u);
#endif
#if STORE_ON_DESCENT
        if (down) {  // predicated stores: most passes count or skip their child
            top[0] = a;
            top[STACK * WG] = l;
            top[2 * STACK * WG] = r;
        }
#endif
        a = down ? na : (a ^ bit);
        c = down ? nc : c;
        l = down ? nl : l;
        r = down ? nr : r;
        d += down ? 1 : 0;
        top += down ? WG : 0;
    }
}
#endif

// skip: fused's pass, but a node whose candidates are used up is never pushed. A descent through
// a node's last candidate leaves nothing to come back to, so its slot is not kept (the stack holds
// only nodes with candidates left) and the pop after a subtree lands straight on the nearest
// ancestor that still has some: no pass is spent popping through exhausted levels (fused spends
// one per such level: 1.36x more passes than candidates at N=14-15). A slot therefore keeps the
// node's own cols (several levels may be undone at once) next to its candidates left, ld and rd;
// the level comes back as the number of queens in cols placed since the state's start.
// Border: either layout (EVENTS or TABLE), read by the level as in fused.
// FILTER (skip; not with the EVENTS border): a child's candidates whose own child would have no free
// square are dropped when the child is made, so no pass is spent on them (34% of the passes at N=14-16
// found such a dead child). b is dead when every free square F of the row after b's lies on b's
// column or diagonals, i.e. F within b-1..b+1 -- for all b at once: b between the highest bit of F less
// one and the lowest plus one (F empty: all dead). NEXT_FREE(k, ...): F of level k before its queen; on
// the edges mode's forced row F is the row's squares before forcing: forcing only takes squares away, so
// a b dead without it is dead with it (F widened there instead: 10% more passes at N=14-16). The last
// row's band is left out of F (0.3% more passes, 3 instructions fewer per pass). Node counts stay those
// of the full tree (COUNT_NODES counts the dropped children).
#ifndef FILTER  // on by default where it can be (not with the EVENTS border: skip-ev, lds, fused)
#define FILTER (!BORDER || TABLE)
#endif
#if FILTER && BORDER && !TABLE
#error "FILTER needs the TABLE layout of the border (or none)"
#endif
#if EDGES
#define NEXT_FREE(k, nc, nl, nr) (~((nc) | ((nl) << 1) | ((nr) >> 1) | EDGE_BOUND(k)) & full)
#elif BORDER
#define NEXT_FREE(k, nc, nl, nr) ~((nc) | ((nl) << 1) | ((nr) >> 1) | tab[min((int)(k), last) * WG])  // tab has ~full
#else
#define NEXT_FREE(k, nc, nl, nr) (~((nc) | ((nl) << 1) | ((nr) >> 1)) & allowed)
#endif
// the candidates b of a whose next row keeps a square, given that row's free squares f
inline uint nq_alive(const uint a, const uint f)
{
    const uint low = f & (~f + 1u);
    // b > lowest + 1, or b < highest - 1 (0x3fffffff >> clz: the bits below highest - 1). f | 1: f = 0
    // gives none on either side (clz 31: 0; low 0: 0), with no test, and a shift the compiler knows is < 32
    return a & (~(low * 4u - 1u) | (0x3fffffffu >> clz(f | 1u)));
}
// A state's last level is a leaf (counted, never descended from), so its levels 0..last-1 need slots.
#define SLOTS (STACK > 1 ? STACK - 1 : 1)
// SLOT_VEC 1: a slot is one uint4 per lane ([slot][lane]: one 128-bit store per pass and one load per
// pop instead of four; a warp's 32 slots of one level are 512 contiguous bytes, no bank conflict);
// 0: four words apart ([word][slot][lane], skip-soa).
#ifndef SLOT_VEC
#define SLOT_VEC 1
#endif
#ifndef POP_SIBLINGS
#define POP_SIBLINGS 1
#endif
#if SLOT_VEC
#define SLOT_STORE(top, cand, c, l, r) *(top) = (uint4)((cand), (c), (l), (r))
#define SLOT_LOAD(top, cand, c, l, r) { const uint4 s_ = *(top); cand = s_.x; c = s_.y; l = s_.z; r = s_.w; }
#else
#define SLOT_STORE(top, cand, c, l, r) \
    { (top)[0] = (cand); (top)[SLOTS * WG] = (c); (top)[2 * SLOTS * WG] = (l); (top)[3 * SLOTS * WG] = (r); }
#define SLOT_LOAD(top, cand, c, l, r) \
    { cand = (top)[0]; c = (top)[SLOTS * WG]; l = (top)[2 * SLOTS * WG]; r = (top)[3 * SLOTS * WG]; }
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_skip(EVENTS_KERNEL_PARAMS)
{
    STATE_VARIABLES
#if SLOT_VEC
    __local uint4 stack[SLOTS * WG];  // [slot][lane]: candidates left, cols, ld, rd
    __local uint4 *const base = stack + lane;
    __local uint4 *top = base;  // the next free slot
#else
    __local uint stack[4 * SLOTS * WG];  // [word][slot][lane]
    __local uint *const base = stack + lane;
    __local uint *top = base;
#endif
#if HAS_TABLE
    __local uint table[STACK * WG];
    __local uint *const tab = table + lane;
#endif
    uint i = atomic_inc(next);
    if (i >= nstates) return;
    LOAD_STATE(FUSED_SMALL_STATE)
    int placed0 = (int)popcount(c);
    for (;;) {
        if (a == 0u) {
            // no ancestor has candidates left: the state is done (compared as 32-bit addresses: as
            // pointers, NVIDIA's compiler compares them as 64-bit generic ones, on every pop)
            if ((uint)(size_t)top == (uint)(size_t)base) {
                STORE_COUNT
                i = atomic_inc(next);
                if (i >= nstates) return;
                LOAD_STATE(FUSED_SMALL_STATE)
                placed0 = (int)popcount(c);
                continue;
            }
            top -= WG;
            SLOT_LOAD(top, a, c, l, r)
            d = (int)popcount(c) - placed0;
        }
        const uint bit = a & (~a + 1u);
        const uint rest = a - bit;  // = a ^ bit (bit is in a); a subtraction can go to the FMA pipe, a LOP3 cannot
#if EDGES
        lrow = bit == 1u ? d : lrow;
        rrow = bit == hi ? d : rrow;
#endif
        uint nc, nl, nr, na;
        NEXT_ROW((uint)(d + 1), bit, c, l, r, nc, nl, nr, na)
        const bool leaf = d == last - 1;
        // the child's candidates to descend to (a leaf counts na itself: no select between the two)
#if FILTER
        const uint live = nq_alive(na, NEXT_FREE(d + 2, nc, nl, nr));
#if defined(COUNT_NODES) && !defined(COUNT_PASSES)
        nd += leaf ? 0u : popcount(na ^ live);
#endif
#else
        const uint live = na;
#endif
        // the slot is written on every pass, kept (top moves on) only where it will be read again
        // (stores predicated on keeping it: N=20 2.125 s vs 2.088 s, bench/NOTES.md)
        SLOT_STORE(top, rest, c, l, r);
        // the 64-bit sum on the leaf's path only (a leaf is about 1% of the passes)
        if (leaf) cnt += LEAF_COUNT(LEAF_MASK(na));
#if defined(COUNT_NODES) && defined(COUNT_PASSES)
        nd += 1;
#elif defined(COUNT_NODES)
        nd += 1 + (leaf ? popcount(LEAF_MASK(na)) : 0u);
#endif
#if POP_SIBLINGS
        // The slot is kept whenever candidates are left, and the pass always moves to the child. A
        // child with nothing to explore (a leaf, or no live candidate) leaves a = 0, so the next pass
        // pops -- the node's next candidate, from the slot just written. No selects between child and
        // node: the pop branch runs on nearly every pass of a warp anyway (N=21 13.76 s vs 14.07 s).
        top += rest != 0u ? WG : 0;
        a = leaf ? 0u : live;
        c = nc;
        l = nl;
        r = nr;
        d += 1;
#else  // skip-sel: a descent that leaves candidates behind keeps the slot; else the siblings go on
        const bool down = !leaf && live != 0u;
        top += down && rest != 0u ? WG : 0;
        a = down ? live : rest;
        c = down ? nc : c;
        l = down ? nl : l;
        r = down ? nr : r;
        d += down ? 1 : 0;
#endif
    }
}
