// Costas array completion, centre first (`cf`, the pool's symmetry mode "centre"): every work-item takes
// states from a global atomic counter; a state holds the rows of the first columns in the reading order
// (odd n: m, m-1, m+1, m-2, ...; even n: m0, m1, m0-1, m1+1, ...), and the search goes on with the
// unplaced column of the fewest rows left (ties: the one read first), which visits about 2-3x fewer nodes
// than fc's left to right at orders 14-17 (bench/costas_orders.c, bench/NOTES.md).
//
// Forward checking, complete in any order: each unplaced column keeps its domain (the rows consistent
// with every placed dot), per level. A new dot N = (c, v) forbids a row x of an unplaced column u only
// through a repeated vector with X = (u, x) and N among the four dots, four table lookups: X - N a vector
// of two older dots (E), X + N the sum of two older dots or twice one (S), X = 2N - o (RF), 2X = N + o
// (MID). A dot enters the tables when its node is expanded and leaves them on the way back (XOR: the
// vectors and sums of a valid partial array are all distinct).
//
// Symmetry: the group {id, H, V, HV} (column and row reflections) around the centre. An array is kept
// when its reading is the smallest of its 4 images; at each node the first reading position that two
// readings do not both decide becomes a domain filter, a smaller image prunes, a larger one settles that
// image for the subtree. Leaves are checked in full. The transposes are not cut: the host counts each
// class of 8 once, at its smallest reading (permenum.problems.costas_symmetry.centre_class_share).
//
// Build options: -DNMAX=<n> (sizes the private tables), -DCOUNT_NODES (nodes as costas_fc counts them:
// 1 + the placements below the state that forward checking lets live). The arguments are fc's.
// costas_mid (the end of this file) is the same mode's plain search, for `verify`.

#ifndef NMAX
#define NMAX 32
#endif
#define NONE 0xffu
#define CST_DONE 0xffu          // an image settled (larger) for the whole subtree
#define EO (NMAX - 1)           // E[EO + dc]: signed column distance dc of a vector, -(n-1)..n-1
#define RO (NMAX - 1)           // RF[RO + 2c - u], MID[.][RO + 2u - c]: -(n-1)..2(n-1)
#define RSIZE (3 * NMAX - 2)

inline uint le_mask(int t, uint full) { return t < 0 ? 0u : t >= 31 ? full : ((2u << t) - 1u) & full; }
inline uint ge_mask(int t, uint full) { return t <= 0 ? full : t > 31 ? 0u : full & ~((1u << t) - 1u); }

// The centre rule resumed at each image's first undecided reading position (in -> out, per image); the
// positions before it are decided and equal in both readings, so they stay so below. Narrows nd in place.
// Returns the columns it narrowed, or ~0u: a smaller image or an empty domain (the node dies).
inline uint centre_filter(const uint n, const uint full, const uchar *cpos, const uchar *p, uint *nd,
                          const uchar *in, uchar *out)
{
    uint changed = 0;
    for (int g = 1; g < 4; ++g) {
        const int gh = g & 1, gv = g & 2;
        uint i = in[g];
        if (i == CST_DONE) { out[g] = CST_DONE; continue; }
        for (; i < n; ++i) {
            const uint c = cpos[i], c2 = gh ? n - 1u - c : c;
            const uint x = p[c], y2 = p[c2];
            if (x != NONE && y2 != NONE) {
                const uint y = gv ? n - 1u - y2 : y2;
                if (x < y) { i = CST_DONE; break; }
                if (x > y) return ~0u;
                continue;
            }
            uint a = nd[c], b = nd[c2];
            if (c == c2) {
                if (!gv) continue;  // H on the centre column: always equal
                a &= le_mask(((int)n - 1) / 2, full);
            } else if (x != NONE) {
                b &= gv ? le_mask((int)n - 1 - (int)x, full) : ge_mask((int)x, full);
            } else if (y2 != NONE) {
                a &= gv ? le_mask((int)n - 1 - (int)y2, full) : le_mask((int)y2, full);
            } else if (gv) {  // p[c] + p[c2] <= n-1
                if (!a || !b) return ~0u;
                a &= le_mask((int)n - 1 - (int)ctz(b), full);
                if (a) b &= le_mask((int)n - 1 - (int)ctz(a), full);
            } else {          // p[c] <= p[c2]
                if (!a || !b) return ~0u;
                a &= le_mask(31 - (int)clz(b), full);
                if (a) b &= ge_mask((int)ctz(a), full);
            }
            if (x == NONE) {
                if (!a) return ~0u;
                if (a != nd[c]) { nd[c] = a; changed |= 1u << c; }
            }
            if (y2 == NONE && c2 != c) {
                if (!b) return ~0u;
                if (b != nd[c2]) { nd[c2] = b; changed |= 1u << c2; }
            }
            break;
        }
        out[g] = (uchar)i;
    }
    return changed;
}

// The reading order (odd n: m, m-1, m+1, ...; even n: m0, m1, m0-1, m1+1, ...) and each column's place in it.
inline void reading_order(const uint n, uchar *cpos, uchar *place)
{
    const int m = ((int)n - 1) / 2;
    uint k = 0;
    if ((n & 1u) == 0u) {
        for (int s = 0; k < n; ++s) { cpos[k++] = (uchar)(m - s); cpos[k++] = (uchar)(m + 1 + s); }
    } else {
        cpos[k++] = (uchar)m;
        for (int s = 1; k < n; ++s) { cpos[k++] = (uchar)(m - s); if (k < n) cpos[k++] = (uchar)(m + s); }
    }
    for (uint i = 0; i < n; ++i) place[cpos[i]] = (uchar)i;
}

// A whole array is kept when no reflection (H, V, HV) reads smaller; then it is counted and written out.
inline void keep_leaf(const uint n, const uchar *cpos, const uchar *p, ulong *cnt, __global uchar *found,
                      volatile __global uint *nfound, const uint capacity)
{
    for (int g = 1; g < 4; ++g)
        for (uint i = 0; i < n; ++i) {
            const uint c = cpos[i], x = p[c], y2 = p[g & 1 ? n - 1u - c : c];
            const uint y = g & 2 ? n - 1u - y2 : y2;
            if (x < y) break;
            if (x > y) return;
        }
    ++*cnt;
    const uint slot = atomic_inc(nfound);
    if (slot < capacity)
        for (uint j = 0; j < n; ++j) found[slot * n + j] = p[j];
}

__kernel void costas_cf(const uint n, const uint depth, const uint nstates,
                        __global const uchar *prefixes, __global ulong *counts,
                        __global ulong *nodes, volatile __global uint *next,
                        __global uchar *found, volatile __global uint *nfound,
                        const uint capacity)
{
    const uint full = n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
    const uint n1 = n - 1u;
    uchar cpos[NMAX], tie[NMAX];  // reading order; each column's place in it (the tie rule)
    uchar p[NMAX];                // row of each column, NONE while unplaced
    uchar pc[NMAX], pr[NMAX];     // the placed dots in placement order (level)
    uchar lvc[NMAX];              // per level: the column branched on
    uint lvm[NMAX];               // per level: the rows left to try
    uchar cst[NMAX + 1][4];       // per level: the centre rule's resume positions
    uint dom[NMAX + 1][NMAX];     // per level: the domains of the unplaced columns
    ulong E[2 * NMAX - 1], S[2 * NMAX - 1], RF[RSIZE];
    uint MID[2][RSIZE];

    reading_order(n, cpos, tie);

    for (;;) {
        const uint state = atomic_inc(next);
        if (state >= nstates) break;
        ulong cnt = 0, nd_count = 1;  // nodes as fc counts them: the state and each placement below it that lives
        for (uint i = 0; i < 2u * NMAX - 1u; ++i) E[i] = S[i] = 0;
        for (uint i = 0; i < RSIZE; ++i) { RF[i] = 0; MID[0][i] = MID[1][i] = 0; }
        for (uint u = 0; u < n; ++u) { p[u] = NONE; dom[0][u] = full; }
        uint placed_cols = 0, placed_rows = 0;
        int alive = 1;
        {
            const uchar zero[4] = {0, 0, 0, 0};
            if (centre_filter(n, full, cpos, p, dom[0], zero, cst[0]) == ~0u) alive = 0;
        }

        // Place (c, v) at level lv (its dot already in p, pc, pr and the placed masks): the next level's
        // domains, resume positions, and in *nextc the column to branch on. 0: the node dies.
#define PROPAGATE(lv, c, v, ok, nextc)                                                                   \
        {                                                                                                \
            const uint un_ = ~placed_cols & full, bit_ = 1u << (v);                                     \
            const int sh_ = (int)n1 - (int)(v), sm_ = (int)((v) + 1u) >> 1, sr_ = 62 - 2 * (int)(v);     \
            uint any_ = 0, best_ = ~0u;                                                                  \
            ok = 1;                                                                                      \
            for (uint m_ = un_; m_; m_ &= m_ - 1u) {                                                     \
                const uint u = ctz(m_);                                                                  \
                const uint x = dom[lv][u] & ~bit_ & ~(uint)(E[EO + u - (c)] >> sh_)                     \
                               & ~(uint)(S[u + (c)] >> (v)) & ~(uint)(RF[RO + 2 * (c) - u] >> sr_)      \
                               & ~(MID[(v) & 1u][RO + 2 * u - (c)] << sm_);                              \
                if (!x) { ok = 0; break; }                                                               \
                dom[(lv) + 1][u] = x;                                                                    \
                any_ |= x;                                                                               \
                const uint key_ = popcount(x) << 12 | (uint)tie[u] << 6 | u;                             \
                best_ = min(best_, key_);                                                                \
            }                                                                                            \
            if (ok) {                                                                                    \
                uint changed_ = 0;                                                                       \
                if ((cst[lv][1] & cst[lv][2] & cst[lv][3]) == CST_DONE)                                  \
                    for (int g_ = 0; g_ < 4; ++g_) cst[(lv) + 1][g_] = CST_DONE;                        \
                else                                                                                     \
                    changed_ = centre_filter(n, full, cpos, p, dom[(lv) + 1], cst[lv], cst[(lv) + 1]);   \
                if (changed_ == ~0u) ok = 0;                                                             \
                else if (changed_) {                                                                     \
                    any_ = 0;                                                                            \
                    for (uint m_ = un_; m_; m_ &= m_ - 1u) any_ |= dom[(lv) + 1][ctz(m_)];              \
                    for (uint m_ = changed_; m_; m_ &= m_ - 1u) {                                        \
                        const uint u = ctz(m_);                                                          \
                        best_ = min(best_, popcount(dom[(lv) + 1][u]) << 12 | (uint)tie[u] << 6 | u);    \
                    }                                                                                    \
                }                                                                                        \
                if (ok && (~placed_rows & full & ~any_)) ok = 0;                                         \
                nextc = best_ & 63u;                                                                     \
            }                                                                                            \
        }
        // A dot into (or out of) the tables: its vectors and sums with the older dots, and its own entries.
#define TOGGLE(lv, c, v)                                                                                 \
        {                                                                                                \
            for (uint i_ = 0; i_ < (lv); ++i_) {                                                         \
                const uint co_ = pc[i_], ro_ = pr[i_];                                                   \
                E[EO + (c) - co_] ^= 1ul << (n1 + (v) - ro_);                                            \
                E[EO + co_ - (c)] ^= 1ul << (n1 - (v) + ro_);                                            \
                S[(c) + co_] ^= 1ul << ((v) + ro_);                                                      \
            }                                                                                            \
            S[2 * (c)] ^= 1ul << (2 * (v));                                                              \
            RF[RO + (c)] ^= 1ul << (62 - (v));                                                           \
            MID[(v) & 1u][RO + (c)] ^= 1u << ((v) >> 1);                                                 \
        }

        // the state's own dots, placed as the search would place them (a dead state counts nothing)
        uint lv = 0, col = cpos[0];
        for (; lv < depth && alive; ++lv) {
            const uint c = cpos[lv], v = prefixes[state * depth + lv];
            if (!(dom[lv][c] >> v & 1u)) { alive = 0; break; }
            pc[lv] = (uchar)c; pr[lv] = (uchar)v; p[c] = (uchar)v;
            placed_cols |= 1u << c; placed_rows |= 1u << v;
            if (lv + 1u < n) {
                int ok;
                PROPAGATE(lv, c, v, ok, col)
                if (!ok) { alive = 0; break; }
                if (lv + 2u < n) TOGGLE(lv, c, v)
            }
        }
        if (!alive) {
            counts[state] = 0;
#ifdef COUNT_NODES
            nodes[state] = 0;
#endif
            continue;
        }

        if (lv == n) {
            keep_leaf(n, cpos, p, &cnt, found, nfound, capacity);
        } else {
            const uint top = lv;
            lvc[lv] = (uchar)col;
            lvm[lv] = dom[lv][col];
            for (;;) {
                const uint m = lvm[lv];
                if (!m) {  // level done: back to the parent and take its dot out
                    if (lv == top) break;
                    --lv;
                    const uint c = lvc[lv], v = pr[lv];
                    if (lv + 2u < n) TOGGLE(lv, c, v)
                    placed_cols &= ~(1u << c); placed_rows &= ~(1u << v); p[c] = NONE;
                    continue;
                }
                const uint v = ctz(m), c = lvc[lv];
                lvm[lv] = m & (m - 1u);
                pc[lv] = (uchar)c; pr[lv] = (uchar)v; p[c] = (uchar)v;
                placed_cols |= 1u << c; placed_rows |= 1u << v;
                if (lv + 1u < n) {
                    int ok;
                    uint nextc = 0;
                    PROPAGATE(lv, c, v, ok, nextc)
                    if (ok) {
#ifdef COUNT_NODES
                        ++nd_count;
#endif
                        if (lv + 2u < n) TOGGLE(lv, c, v)
                        ++lv;
                        lvc[lv] = (uchar)nextc;
                        lvm[lv] = dom[lv][nextc];
                        continue;
                    }
                } else {
#ifdef COUNT_NODES
                    ++nd_count;
#endif
                    keep_leaf(n, cpos, p, &cnt, found, nfound, capacity);
                }
                placed_cols &= ~(1u << c); placed_rows &= ~(1u << v); p[c] = NONE;
            }
        }
        counts[state] = cnt;
#ifdef COUNT_NODES
        nodes[state] = nd_count;
#endif
    }
}

// ---- costas_mid `mid`: the centre mode's plain search, the second computation `verify` runs ----------
// The columns in the reading order, one after another: no dynamic order, no forward checking, no
// incremental tables, no symmetry cut before the leaves. A column's rows are those that repeat no vector
// with any placed column (right[d] / left[d]: bit dr + n - 1 of each vector (d, dr) seen, and of (d, -dr));
// the placed columns are a block around the centre with the next one at its end, so no two of them lie
// on either side of it (the midpoint case cf checks); whole arrays go through keep_leaf. 5.4x cf's nodes
// at order 15 (PoCL: 2.8x its time): for checking a sample, not for counting a run.
__kernel void costas_mid(const uint n, const uint depth, const uint nstates,
                         __global const uchar *prefixes, __global ulong *counts,
                         __global ulong *nodes, volatile __global uint *next,
                         __global uchar *found, volatile __global uint *nfound,
                         const uint capacity)
{
    const uint full = n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
    const uint n1 = n - 1u;
    uchar cpos[NMAX], place[NMAX], p[NMAX];
    ulong right[NMAX], left[NMAX];
    uint cand[NMAX];
    reading_order(n, cpos, place);

    for (;;) {
        const uint state = atomic_inc(next);
        if (state >= nstates) break;
        ulong cnt = 0, nd = 1;
        uint rows = 0;
        for (uint d = 0; d < n; ++d) { right[d] = left[d] = 0; p[d] = NONE; }
        // the rows column cpos[k] may take beside the columns placed before it
#define MID_ALLOWED(k, out)                                                                              \
        {                                                                                                \
            const uint c_ = cpos[k];                                                                     \
            uint forbid_ = rows;                                                                         \
            for (uint i_ = 0; i_ < (k); ++i_) {                                                          \
                const uint j_ = cpos[i_], pj_ = p[j_];                                                   \
                forbid_ |= (uint)((j_ < c_ ? right[c_ - j_] : left[j_ - c_]) >> (n1 - pj_));            \
            }                                                                                            \
            out = ~forbid_ & full;                                                                       \
        }
        // column c takes (or gives back) row v: its vectors with the placed columns, both orientations
#define MID_TOGGLE(k, c, v)                                                                              \
        {                                                                                                \
            for (uint i_ = 0; i_ < (k); ++i_) {                                                          \
                const uint j_ = cpos[i_], d_ = (c) > j_ ? (c) - j_ : j_ - (c);                           \
                const int dr_ = (c) > j_ ? (int)(v) - (int)p[j_] : (int)p[j_] - (int)(v);                 \
                right[d_] ^= 1ul << (dr_ + (int)n1);                                                     \
                left[d_] ^= 1ul << ((int)n1 - dr_);                                                      \
            }                                                                                            \
            rows ^= 1u << (v);                                                                           \
        }
        int alive = 1;
        uint k = 0;
        for (; k < depth; ++k) {
            const uint c = cpos[k], v = prefixes[state * depth + k];
            uint allowed;
            MID_ALLOWED(k, allowed)
            if (!(allowed >> v & 1u)) { alive = 0; break; }
            MID_TOGGLE(k, c, v)
            p[c] = (uchar)v;
        }
        if (alive && k == n) {
            keep_leaf(n, cpos, p, &cnt, found, nfound, capacity);
        } else if (alive) {
            const uint top = k;
            MID_ALLOWED(k, cand[k])
            for (;;) {
                const uint a = cand[k];
                if (!a) {
                    if (k == top) break;
                    --k;
                    const uint c = cpos[k], v = p[c];
                    p[c] = NONE;
                    MID_TOGGLE(k, c, v)
                    continue;
                }
                const uint v = ctz(a), c = cpos[k];
                cand[k] = a & (a - 1u);
                ++nd;
                if (k == n1) {
                    p[c] = (uchar)v;
                    keep_leaf(n, cpos, p, &cnt, found, nfound, capacity);
                    p[c] = NONE;
                    continue;
                }
                MID_TOGGLE(k, c, v)
                p[c] = (uchar)v;
                ++k;
                MID_ALLOWED(k, cand[k])
            }
        }
        counts[state] = cnt;
#ifdef COUNT_NODES
        nodes[state] = alive ? nd : 0;
#endif
    }
}
