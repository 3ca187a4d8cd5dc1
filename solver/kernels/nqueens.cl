// N-Queens completion kernels. Every work-item takes states from a global atomic counter and counts
// all completions of each with 64-bit sums, filling rows top to bottom with 32-bit masks: cols
// (occupied columns), ld / rd (diagonals shifted to the next row).
//
//   nqueens_prepare  those masks, from the pool's absolute masks (permenum/problems/nqueens.py), on
//                    the device: the host only uploads columns it already holds.
//   nqueens_prepare_children  the same for the children of a batch of states, made on the device.
//   nqueens_dfs      `dfs`: the plain search with private stacks, the readable reference.
//   nqueens_dsl      `dsl`: DoubleSweep-Light, the paper's algorithm, private stacks.
//                    dfs and dsl serve the top-down symmetry modes only (mirror, none).
//   nqueens_skip     `skip` (the GPU default), `skip-soa` (-DSLOT_VEC=0, the CPU default) and `skip-all`
//                    (-DFILTER=0: without the dead-child filter, to check that the filter keeps every
//                    count and node); every symmetry mode (-DBORDER=1: dihedral, -DEDGES=1: edges).
// The retired variants (lds, lds2, lds64, fused and skip's others) are listed in bench/NOTES.md with
// their figures and the commit that last had them.
//
// Build options: -DSTACK=<rows left> sizes the stacks; -DCOUNT_NODES also writes the number of
// search nodes per state (a separate build: it costs time in the hot loop); with -DCOUNT_PASSES too,
// skip writes its passes per state instead (what its dead-child filter saves).

#ifndef STACK
#define STACK 32
#endif

inline uint nq_full(const uint n) { return n >= 32u ? 0xffffffffu : ((1u << n) - 1u); }

// ---- nqueens_prepare ------------------------------------------------------------------------------
// One work-item per state: cols, ld and rd of the first open row row0 (ld = d1 >> (n-1-row0),
// rd = d2 >> row0, both cut to the board), span = row0 | last << 8 (0xffff: complete), and fl, the
// border word that skip reads, in one of three layouts (dfs and dsl read cols, ld and rd only):
// * TOP_DOWN (mirror, none): fl = 0.
// * TABLE (dihedral: queens below the open rows): the queens below row0 as one word -- bottom column |
//   left row << 8 | right row << 16 (0xff: that side queen is not below row0) -- from which skip writes
//   each level's squares attacked from below into a table (LOAD_BORDER). A side queen below row0 is then
//   placed like any other queen when its row comes, so its column is left out of cols and its line
//   towards its own square (the left queen's "/", the right queen's "\") out of rd / ld.
// * EDGES (the edges mode): top-down masks; fl = t | row of column 0's queen << 8 | row of column n-1's
//   queen << 16 (0xff: not placed yet; a corner state, t = 0, has c1 there), read from the prefix matrix
//   (width columns per state) that comes in side_l.
#define LAYOUT_TOP_DOWN 0u
#define LAYOUT_TABLE 1u
#define LAYOUT_EDGES 2u

// Entry j of a state's prefix: the row p of ``width`` entries, then ``extra`` (a child made on the
// device: its parent's row and the column it places).
inline uint nq_entry(__global const uchar *p, const uint width, const uint extra, const uint j)
{
    return j < width ? (uint)p[j] : extra;
}

// One state's prepared words at out[o] from its absolute masks; in the edges layout its prefix is
// p[0..width) then ``extra`` when ``entries`` is width + 1.
inline void nq_prepare_one(const uint n, const uint layout, const uint open, uint c, ulong dl, ulong dr,
                           const uint sl, const uint sr, const uint bottom_col,
                           __global const uchar *p, const uint width, const uint extra, const uint entries,
                           const size_t o, __global uint *c_out, __global uint *ld_out, __global uint *rd_out,
                           __global uint *span_out, __global uint *fl_out)
{
    const uint full = nq_full(n);
    const uint row0 = open ? 31u - clz(open & (~open + 1u)) : 0u;
    const uint border = layout == LAYOUT_TABLE;
    const uint last = border ? n - 2u : n - 1u;  // the dihedral mode's bottom row is placed
    const bool left_below = open && border && sl > row0 && sl <= last;
    const bool right_below = open && border && sr > row0 && sr <= last;
    if (border) {
        c &= ~((left_below ? 1u : 0u) | (right_below ? 1u << (n - 1u) : 0u));
        dr &= left_below ? ~(1ul << sl) : ~0ul;                     // the left queen's "/" line
        dl &= right_below ? ~(1ul << (2u * n - 2u - sr)) : ~0ul;    // the right queen's "\" line
    }
    c_out[o] = c;
    ld_out[o] = (uint)(dl >> (n - 1u - row0)) & full;
    rd_out[o] = (uint)(dr >> row0) & full;
    span_out[o] = open ? row0 | (last << 8) : 0xffffu;
    uint fl = 0u;
    if (border) {
        fl = bottom_col | (left_below ? sl : 0xffu) << 8 | (right_below ? sr : 0xffu) << 16;
    } else if (layout == LAYOUT_EDGES) {
        uint lrow = 0xffu, rrow = 0xffu;
        for (uint j = 0u; j < entries; ++j) {
            const uint v = nq_entry(p, width, extra, j);
            lrow = (v == 0u && lrow == 0xffu) ? j : lrow;
            rrow = (v == n - 1u && rrow == 0xffu) ? j : rrow;
        }
        const uint t = nq_entry(p, width, extra, 0u);
        rrow = (t == 0u && entries > 1u) ? nq_entry(p, width, extra, 1u) : rrow;
        fl = t | lrow << 8 | rrow << 16;
    }
    fl_out[o] = fl;
}

__kernel void nqueens_prepare(const uint n, const uint layout, const uint nstates, const uint width,
                              __global const uint *cols, __global const ulong *d1, __global const ulong *d2,
                              __global const uint *rows, __global const uchar *side_l, __global const uchar *side_r,
                              __global const uchar *bottom,
                              __global uint *c_out, __global uint *ld_out, __global uint *rd_out,
                              __global uint *span_out, __global uint *fl_out)
{
    const uint i = get_global_id(0);
    if (i >= nstates) return;
    const uint border = layout == LAYOUT_TABLE;
    nq_prepare_one(n, layout, rows[i], cols[i], d1[i], d2[i], border ? side_l[i] : 0u, border ? side_r[i] : 0u,
                   border ? bottom[i] : 0u, side_l + (size_t)i * width, width, 0u, width,
                   i, c_out, ld_out, rd_out, span_out, fl_out);
}

// ---- nqueens_prepare_children ----------------------------------------------------------------------
// The states one row below ``nparents`` parents, prepared like nqueens_prepare's, made on the device
// (jobs.counting.refine: the host climbs to the parents only): parent i places a queen in each column of
// choices[i] (its next open row's squares in the symmetry mode, computed on the host), ascending,
// writing children first[i] .. first[i] + popcount(choices[i]) - 1 -- the order the host's expansion
// has. Children whose own next row is dead are kept: they count 0.
__kernel void nqueens_prepare_children(const uint n, const uint layout, const uint nparents, const uint width,
                                       __global const uint *cols, __global const ulong *d1, __global const ulong *d2,
                                       __global const uint *rows, __global const uchar *side_l,
                                       __global const uchar *side_r, __global const uchar *bottom,
                                       __global const uint *choices, __global const uint *first,
                                       __global uint *c_out, __global uint *ld_out, __global uint *rd_out,
                                       __global uint *span_out, __global uint *fl_out)
{
    const uint i = get_global_id(0);
    if (i >= nparents) return;
    const uint border = layout == LAYOUT_TABLE;
    const uint open = rows[i];
    const uint row = 31u - clz(open & (~open + 1u));
    uint todo = choices[i];
    size_t o = first[i];
    while (todo) {
        const uint col = 31u - clz(todo & (~todo + 1u));
        todo &= todo - 1u;
        nq_prepare_one(n, layout, open & ~(1u << row), cols[i] | 1u << col, d1[i] | 1ul << (col + n - 1u - row),
                       d2[i] | 1ul << (col + row), border ? side_l[i] : 0u, border ? side_r[i] : 0u,
                       border ? bottom[i] : 0u, side_l + (size_t)i * width, width, col, width + 1u,
                       o++, c_out, ld_out, rd_out, span_out, fl_out);
    }
}

// ---- nqueens_dfs: `dfs`, the readable reference ---------------------------------------------------
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

// ---- nqueens_dsl: `dsl`, DoubleSweep-Light --------------------------------------------------------
// The same row order, plus, after every placement,
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

// ---- nqueens_skip: `skip` (GPU default), `skip-soa` (CPU default), `skip-all` ---------------------
// One candidate per pass: a pass pops first if its node has no candidates left, then takes one
// candidate and makes its child in straight-line code (no push branch); a work-item takes its next
// state inside the search loop (a lane that finishes early does not wait for its warp). The stack
// lives in __local memory, [slot][lane], so the lanes of a warp touching one level hit consecutive
// words; launched with a fixed work-group size WG. Rows row0..last of a state are its levels
// (span = row0 | last << 8; 0xffff: complete).
//
// A node whose candidates are used up is never pushed. A descent through a node's last candidate
// leaves nothing to come back to, so its slot is not kept (the stack holds only nodes with candidates
// left) and the pop after a subtree lands straight on the nearest ancestor that still has some: no
// pass is spent popping through exhausted levels (the retired `fused`, which did, spent 1.36x more
// passes than candidates at N=14-15). A slot therefore keeps the node's own cols (several levels may
// be undone at once) next to its candidates left, ld and rd; the level comes back as the number of
// queens in cols placed since the state's start.
#ifndef WG
#define WG 64
#endif
// BORDER (the dihedral mode; the prepare kernel's TABLE layout): each level's squares attacked by the
// queens below row0 (and the side columns they hold) are written once per state into a __local table
// tab[level * WG] (~full included), read once per pass (per-pass event selects instead, the retired
// `skip-ev`, 2026-11-23 at ca88920: N=19 0.389 s vs 0.333 s). A side queen's own row is blocked everywhere but its
// square (~1u or ~hi): it is placed there like any other queen, its column and downward lines then
// follow through cols, ld and rd.
#ifndef BORDER
#define BORDER 0
#endif
// EDGES (the edges mode of permenum/problems/nqueens.py, top-down): the mode's bounds from t (row 0's
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
#define EDGE_BOUND(k) ((uint)((int)(k) - ein) <= espan ? ewin : ewout)
// The squares level k rules out after queens cols: on the forced row (level eforce, the last inside
// level, whose bound is none) every column but 0 and n-1 while one of them is empty (so the row keeps
// the empty ones: both when both are empty -- exact, the column left empty is found unfillable further
// down; killing that case here saved 1.1% of the nodes at N=15, not kept: bench/NOTES.md), else the
// level's bound. One select on a predicate (& not &&: NVIDIA's compiler made && a branch). Forcing
// stays: without it (the retired `skip-nf`) N=21 took 21.98 s vs 20.87 s.
#define EDGE_RULED_OUT(k, cols)                                                     \
    ((((int)(k) == eforce) & ((~(cols) & (1u | hi)) != 0u)) ? full & ~(1u | hi) : EDGE_BOUND(k))
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
#elif BORDER
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
#else
#define LOAD_BORDER
#endif
// Sets up state i: its masks, the level of its last row, its border; a complete state (span 0xffff)
// has nothing to search and counts 1. FINISH: what else a state with rows left needs.
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
// The root's children are counted, not entered: a state with one row left is counted at load.
#define COUNT_IF_ONE_ROW \
    if (last == 0) { cnt = LEAF_COUNT(a); nd += popcount(a); a = 0u; }
// The work-item's variables that LOAD_STATE sets.
#if EDGES
#define BORDER_VARIABLES uint et, etie, emul, espan, ewin, ewout, eband; int erow0, lrow, rrow, ein, eforce;
#else
#define BORDER_VARIABLES
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
// masks of level k from the parent's after placing `bit` (ld is not cut to the board: na is)
#if EDGES  // nc: bit is a free column, so c + bit is c | bit (an add can go to the FMA pipe, a LOP3 cannot)
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) + (bit);                                                                 \
    nl = ((l) | (bit)) << 1;                                                          \
    nr = ((r) | (bit)) >> 1;                                                          \
    na = ~(nc | nl | nr | EDGE_RULED_OUT(k, nc)) & full;
#elif BORDER
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) | (bit);                                                                 \
    nl = ((l) | (bit)) << 1;                                                          \
    nr = ((r) | (bit)) >> 1;                                                          \
    na = ~(nc | nl | nr | tab[(k) * WG]) & full;
#else
#define NEXT_ROW(k, bit, c, l, r, nc, nl, nr, na)                                     \
    nc = (c) | (bit);                                                                 \
    nl = ((l) | (bit)) << 1;                                                          \
    nr = ((r) | (bit)) >> 1;                                                          \
    na = ~(nc | nl | nr) & allowed;
#endif
// FILTER (default; `skip-all`: -DFILTER=0): a child's candidates whose own child would have no free
// square are dropped when the child is made, so no pass is spent on them (34% of the passes at N=14-16
// found such a dead child). b is dead when every free square F of the row after b's lies on b's
// column or diagonals, i.e. F within b-1..b+1 -- for all b at once: b between the highest bit of F less
// one and the lowest plus one (F empty: all dead). NEXT_FREE(k, ...): F of level k before its queen; on
// the edges mode's forced row F is the row's squares before forcing: forcing only takes squares away, so
// a b dead without it is dead with it (F widened there instead: 10% more passes at N=14-16). The last
// row's band is left out of F (0.3% more passes, 3 instructions fewer per pass). Node counts stay those
// of the full tree (COUNT_NODES counts the dropped children).
#ifndef FILTER
#define FILTER 1
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
// 0: four words apart ([word][slot][lane], skip-soa: faster where work-items are vectorized, PoCL).
#ifndef SLOT_VEC
#define SLOT_VEC 1
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
// unused1..3 are never read (they held the retired EVENTS border): without them NVIDIA's compiler
// schedules the dihedral build's pass one instruction longer (sm_90 SASS of its PTX: 47 instructions
// instead of 46, 760 in all instead of 752; the edges and top-down builds are the same either way).
// The host passes fl's buffer for each.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nqueens_skip(const uint n, const uint nstates,
                  __global const uint *cols_in, __global const uint *ld_in,
                  __global const uint *rd_in, __global const uint *span_in, __global const uint *fl_in,
                  __global const uint *unused1, __global const uint *unused2, __global const uint *unused3,
                  __global ulong *counts, __global ulong *nodes, volatile __global uint *next EDGE_PARAMS)
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
#if BORDER
    __local uint table[STACK * WG];
    __local uint *const tab = table + lane;
#endif
    uint i = atomic_inc(next);
    if (i >= nstates) return;
    LOAD_STATE(COUNT_IF_ONE_ROW)
    int placed0 = (int)popcount(c);
    for (;;) {
        if (a == 0u) {
            // no ancestor has candidates left: the state is done (compared as 32-bit addresses: as
            // pointers, NVIDIA's compiler compares them as 64-bit generic ones, on every pop)
            if ((uint)(size_t)top == (uint)(size_t)base) {
                STORE_COUNT
                i = atomic_inc(next);
                if (i >= nstates) return;
                LOAD_STATE(COUNT_IF_ONE_ROW)
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
        // The slot is kept whenever candidates are left, and the pass always moves to the child. A
        // child with nothing to explore (a leaf, or no live candidate) leaves a = 0, so the next pass
        // pops -- the node's next candidate, from the slot just written. No selects between child and
        // node: the pop branch runs on nearly every pass of a warp anyway (N=21 13.76 s vs 14.07 s with
        // the selects, the retired `skip-sel`).
        top += rest != 0u ? WG : 0;
        a = leaf ? 0u : live;
        c = nc;
        l = nl;
        r = nr;
        d += 1;
    }
}
