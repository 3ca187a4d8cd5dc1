// Costas array completion: every work-item takes prefixes (columns 0..depth-1 placed) from a
// global atomic counter and fills columns left to right.
//
//   costas_dfs  `dfs`: the plain search, the readable reference (and orders 32). For each distance
//               d, used[d] is a 64-bit mask of the row differences p[j+d]-p[j] (offset by n-1) already
//               present; the rows a new column k may take are the free rows minus, for every d,
//               used[d] shifted by n-1-p[k-d]. Private arrays.
//   costas_fc   `fc`: forward checking with the current level in registers, the default (H100: order 20
//               7.93 s vs 32.6 s for the retired `lds`; PoCL order 14 0.79 s vs dfs 1.20 s; bench/NOTES.md).
//               Orders up to 31; one build per state depth (-DMIN_DEPTH) and split (-DSPLIT).
//
// Build options: -DNMAX=<n>, -DCANONICAL=1 to search only arrays whose p[0] is the smallest of
// their 8 edge offsets (the host weights them), -DCOUNT_NODES for the node-counting build, -DWG=<work-
// group size> for fc's __local stack. The retired `lds` (dfs's arrays in __local memory), `lds-unfused`
// and fc's alternatives are in bench/NOTES.md.
// Every array found is written to `found` (n bytes each) while capacity lasts; `nfound` counts
// all of them, so the host can see an overflow and re-run with room for every array.

#ifndef NMAX
#define NMAX 32
#endif
#ifndef CANONICAL
#define CANONICAL 0
#endif

#define P(k) p[k]
#define CAND(k) cand[k]
#define USED(d) used[d]
// The rows column k may take: free rows, minus every used difference shifted to this column,
// minus (canonical search) the edge rows where p[0] would not be the smallest edge offset, and row 1
// where a corner array would be larger than its transpose (a state that holds column 1).
#if CANONICAL
#define CANONICAL_MASK(k, c)                                                       \
    if ((uint)(k) < p0 || (uint)(k) > n - 1u - p0) c &= ~(1u | (1u << (n - 1u))); \
    if ((uint)(k) == n - 1u) c &= mid_rows;                                        \
    if (p0 == 0u && depth >= 2u && (uint)(k) >= 2u && (uint)(k) < P(1)) c &= ~2u;
#else
#define CANONICAL_MASK(k, c)
#endif
#define CANDIDATES(k)                                                              \
    {                                                                              \
        uint c_ = ~rows & full;                                                    \
        for (int d = 1; d <= (k); ++d) c_ &= ~(uint)(USED(d) >> (sh - P((k) - d))); \
        CANONICAL_MASK(k, c_)                                                      \
        CAND(k) = c_;                                                              \
    }

__kernel void costas_dfs(const uint n, const uint depth, const uint nstates,
                         __global const uchar *prefixes, __global ulong *counts,
                         __global ulong *nodes, volatile __global uint *next,
                         __global uchar *found, volatile __global uint *nfound,
                         const uint capacity)
{
    const uint full = n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
    const uint sh = n - 1u;
    uint p[NMAX];
    uint cand[NMAX];
    ulong used[NMAX];
    for (;;) {
        const uint i = atomic_inc(next);
        if (i >= nstates) break;
        ulong cnt = 0, nd = 1;
        uint rows = 0;
        for (uint d = 0; d < n; ++d) USED(d) = 0;
        for (uint k = 0; k < depth; ++k) {
            const uint v = prefixes[i * depth + k];
            P(k) = v;
            rows |= 1u << v;
            for (uint d = 1; d <= k; ++d) USED(d) |= 1ul << (v - P(k - d) + sh);
        }
        const uint p0 = depth > 0 ? P(0) : 0u;
        // rows allowed in the last column, and columns that may hold row 0 or row n-1
        const uint mid_rows = CANONICAL ? (full >> p0) << p0 & (full >> p0) : full;
        int k = (int)depth;
        if (k == (int)n) {
            cnt = 1;
            const uint slot = atomic_inc(nfound);
            if (slot < capacity)
                for (uint c = 0; c < n; ++c) found[slot * n + c] = (uchar)P(c);
        } else {
            CANDIDATES(k);
            const int base = k;
            for (;;) {
                uint a = CAND(k);
                if (a == 0) {
                    // backtrack: leave column k, undo column k-1
                    if (k == base) break;
                    --k;
                    const uint v = P(k);
                    rows ^= 1u << v;
                    for (int d = 1; d <= k; ++d) USED(d) ^= 1ul << (v - P(k - d) + sh);
                    continue;
                }
                const uint bit = a & (~a + 1u);
                CAND(k) = a ^ bit;
                const uint v = 31u - clz(bit);
                ++nd;
                if (k == (int)n - 1) {  // a complete array
                    P(k) = v;
                    ++cnt;
                    const uint slot = atomic_inc(nfound);
                    if (slot < capacity)
                        for (uint c = 0; c < n; ++c) found[slot * n + c] = (uchar)P(c);
                    continue;
                }
                P(k) = v;
                rows |= bit;
                // record column k's differences and filter column k+1's rows in one pass over d:
                // each USED(d) and P(k-d) is read once (USED(k+1) is still empty: no term)
                {
                    uint c_ = ~rows & full;
                    uint pk = v;  // P(k + 1 - d)
                    for (int d = 1; d <= k; ++d) {
                        const uint q = P(k - d);
                        const ulong u = USED(d) | (1ul << (v - q + sh));
                        USED(d) = u;
                        c_ &= ~(uint)(u >> (sh - pk));
                        pk = q;
                    }
                    ++k;
                    CANONICAL_MASK(k, c_)
                    CAND(k) = c_;
                }
            }
        }
        counts[i] = cnt;
#ifdef COUNT_NODES
        nodes[i] = nd;
#endif
    }
}

// ---- costas_fc: forward checking, the current level in registers ----------------------------------
// Every column not yet placed keeps its domain: the free rows that repeat no displacement against the
// placed columns. Placing row v in column k narrows all of them at once -- for the column e ahead, the
// rows v + D[e], D[e] the displacements at distance e with the new ones (a displacement repeated by the
// new dot and one closing a parallelogram with it are the same rows) -- and kills the node when a column
// ahead has no row left or a free row no column. Orders 13-15 in C: 1.56x fewer placements than dfs and
// 3.2x fewer nodes expanded at order 15; the row check is worth 1.4x on the H100 (bench/NOTES.md).
// Everything a pass reads is in registers, indexed by compile-time distances e = 1..NE (loops unrolled,
// the build is for n == NMAX and one state depth d == MIN_DEPTH; n_ is unused): D[e] as one 64-bit mask
// (bit displacement + n-1) of the displacements among columns before k, back[e] the row of column k - e,
// ahead[e] the domain of column k + e. A state's search places columns d..n-1, so no column is more than
// NE = n-1-d ahead of the one being placed: a pass looks at NE distances, not n-1 (2026-11-24 at 0768086). No step
// asks whether a column exists (2026-11-24 at d318be7, H100 order 20: 22.6 s -> 13.7 s):
// - the new displacement at distance e is the one row 2v - back[e] (three dots equally spaced), so the
//   check reads D[e] as it is and D[e] takes column k's displacements only when the node lives;
// - back[e] of a column before 0 is SENT (63): its row 2v - 63 is no row and its bit (1 << (v+n-1)) >> 63
//   is 0, so D[e] takes the same bits for every e;
// - ahead[e] past column n-1 is BEYOND (bit 31, so n <= 31), which no step clears: such a column is never
//   empty and covers no row, and a level's push may write all NE slots (the deeper levels' slots are
//   not live yet; the stack has NE spare).
// D[NE] is read only at level d (column d + NE is the last), so no step below d changes it; a pop takes
// back[NE], the row of a prefix column, from the prefix kept in __local memory.
// Only a push or a pop touches the stack in __local memory [slot][lane]: per level the candidates left
// and the domains ahead. A pass pops (undoing one column's displacements) when its level is used up
// and goes on to place a candidate in the same pass. A state starts at level d with its domains made
// from its prefix (what forward checking along the prefix leaves: the rows that repeat none of its
// displacements), in unrolled code; a prefix with a repeated row or displacement, an edge row out of
// place, or that forward checking kills, counts 0. Nodes (COUNT_NODES) are 1 + the
// placements below the prefix that live: fewer than dfs's. The stack holds levels d..n-2 only,
// (n-1-d)(n-d)/2 domains a lane.
// SPLIT = s > 0: the pool's states are of depth PD = d - s and the lane places columns PD..d-1 itself,
// an odometer over their free rows, each child started like a state of depth d (its check rejects the
// children the search would not have placed). A pass then looks at s distances fewer (each costs the
// check, push and pop a step), for a start per child: worth it on heavy states (solver.costas's
// default_split). With s = 1 the node counts are the unsplit search's.
#ifndef MIN_DEPTH
#define MIN_DEPTH 1
#endif
#ifndef SPLIT
#define SPLIT 0
#endif
#if SPLIT && MIN_DEPTH < SPLIT + 2
#error "SPLIT takes states of depth 2 or more"
#endif
#define PD (MIN_DEPTH - SPLIT)  // the pool's states' depth
#define NE (NMAX - 1 - MIN_DEPTH > 0 ? NMAX - 1 - MIN_DEPTH : 1)
#define TRI ((NMAX - 1 - MIN_DEPTH) * (NMAX - MIN_DEPTH) / 2 + 1)
#define SCAND(k) s_cand[((k) - MIN_DEPTH) * WG + lane]
#define SENT 63u
#define BEYOND 0x80000000u
#if NMAX > 31
#error "costas_fc serves orders up to 31 (BEYOND is bit 31)"
#endif

// The rows column j may take in a canonical search, p0 and p1 the rows of columns 0 and 1 (p1 = 0: not
// placed): rows 0 and n-1 only in columns p0..n-1-p0, the last column's row in p0..n-1-p0; with a corner
// dot (p0 = 0), row 1 not in columns 2..p1-1 (the array would be larger than its transpose).
static uint fc_edge_rows(const uint n, const uint j, const uint p0, const uint p1, const uint full)
{
    uint a = full;
#if CANONICAL
    if (j < p0 || j > n - 1u - p0) a &= ~(1u | (1u << (n - 1u)));
    if (j == n - 1u) a &= (full >> p0) << p0 & (full >> p0);
    if (p0 == 0u && j >= 2u && j < p1) a &= ~2u;
#endif
    return a;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void costas_fc(const uint n_, const uint depth, const uint nstates,
               __global const uchar *prefixes, __global ulong *counts,
               __global ulong *nodes, volatile __global uint *next,
               __global uchar *found, volatile __global uint *nfound,
               const uint capacity)
{
    const uint n = NMAX;
    const uint full = n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
    __local uint s_cand[(NMAX - MIN_DEPTH) * WG];
    __local uint s_ahead[(TRI + NE) * WG];
    __local uchar s_pre[MIN_DEPTH * WG];  // the state's prefix [column][lane]: back[NE] after a pop
    const uint lane = get_local_id(0);
    ulong D[NE + 1];      // D[e], e = 1..NE
    uint back[NE + 1];    // back[e]: the row of column k - e
    uint ahead[NE + 1];   // ahead[e]: the domain of column k + e
    uint cand = 0u, rows = 0u, k = MIN_DEPTH, slot = 0u;  // slot: where level k's domains ahead are pushed
    ulong cnt = 0, nd = 0;
    uint i = 0xffffffffu;
#if SPLIT
    uint pc[SPLIT], ch[SPLIT];  // pc[l]: the rows left to try in column PD + l, ch[l]: the row it holds
    uint prow = 0u;             // the pool state's rows
#pragma unroll
    for (uint l = 0; l < SPLIT; ++l) pc[l] = ch[l] = 0u;
#endif
    __global const uchar *pre = prefixes;
    for (;;) {
        if (cand == 0u) {
            if (k > MIN_DEPTH) {  // pop: back to column k - 1, undoing its displacements
                --k;
                const uint v = back[1];
#pragma unroll
                for (uint e = 1; e < NE; ++e) back[e] = back[e + 1];
                back[NE] = k >= NE ? (uint)s_pre[(k - NE) * WG + lane] : SENT;
#pragma unroll
                for (uint e = 1; e < NE; ++e)
                    D[e] ^= (1ul << (v + n - 1u)) >> back[e];
                rows ^= 1u << v;
                cand = SCAND(k);
                slot -= n - 1u - k;
                if (cand == 0u) continue;  // that level is used up too: pop again
                __local const uint *top = s_ahead + slot * WG + lane;
#pragma unroll
                for (uint e = 1; e <= NE; ++e)
                    if (e + k <= n - 1u) ahead[e] = top[(e - 1u) * WG];
            } else {  // this state (SPLIT: child) is done: the next one
#if SPLIT
              int L = -1;  // the deepest split column with rows left to try (none: the next pool state)
#pragma unroll
              for (int l = 0; l < SPLIT; ++l)
                  if (pc[l] != 0u) L = l;
              if (L < 0) {
#endif
                if (i != 0xffffffffu) {
                    counts[i] = cnt;
#ifdef COUNT_NODES
                    nodes[i] = nd;
#endif
                }
                i = atomic_inc(next);
                if (i >= nstates) break;
                cnt = 0;
                nd = 1;
                pre = prefixes + (size_t)i * depth;
                if (depth >= n) {  // a complete array
                    cnt = 1;
                    const uint s = atomic_inc(nfound);
                    if (s < capacity)
                        for (uint c = 0; c < n; ++c) found[s * n + c] = pre[c];
                    continue;  // cand = 0: done again at once
                }
#if SPLIT
                prow = 0u;
#pragma unroll
                for (uint c = 0; c < PD; ++c) prow |= 1u << (pre[c] & 31u);
              }  // L = -1: every split column takes its first row
              // the next child: column PD + L takes its next row, the columns after it their first; the
              // rows not yet used, within the edge rules (a child that repeats a displacement fails its
              // start's check)
              uint used = prow;
              bool placed = true;
#pragma unroll
              for (int l = 0; l < SPLIT; ++l) {
                  if (l > L) pc[l] = placed ? fc_edge_rows(n, PD + l, pre[0], pre[1], full) & ~used : 0u;
                  if (l >= L) {
                      placed = placed && pc[l] != 0u;
                      ch[l] = 31u - clz(pc[l] & (~pc[l] + 1u));
                      pc[l] &= pc[l] - 1u;
                  }
                  used |= 1u << (ch[l] & 31u);
              }
              if (!placed) continue;
#endif
                // level d: the prefix's rows, displacements and the domains it leaves, unrolled (d is
                // MIN_DEPTH): no loop in a pass (PoCL runs a pass for all work-items in step only then)
                uint pp[MIN_DEPTH];     // the prefix
                ulong dall[MIN_DEPTH];  // dall[t]: its displacements at distance t, t = 1..d-1
                bool ok = true;         // a prefix the search could have placed
                const uint p1 = MIN_DEPTH >= 2 ? (uint)pre[1] : 0u;  // 0: not placed
                rows = 0u;
#pragma unroll
                for (uint c = 0; c < MIN_DEPTH; ++c) {
#if SPLIT
                    const uint v = c < PD ? (uint)pre[c] : ch[c - PD < SPLIT ? c - PD : 0];
#else
                    const uint v = pre[c];
#endif
                    pp[c] = v;
                    s_pre[c * WG + lane] = (uchar)v;
                    ok = ok && v < n && (rows >> v & 1u) == 0u && (fc_edge_rows(n, c, pp[0], c >= 2u ? p1 : 0u, full) >> v & 1u);
                    rows |= 1u << (v & 31u);
                }
#pragma unroll
                for (uint t = 1; t < MIN_DEPTH; ++t) {
                    ulong m = 0;
#pragma unroll
                    for (uint a = 0; a + t < MIN_DEPTH; ++a) {
                        const ulong b = 1ul << ((pp[a + t] - pp[a] + n - 1u) & 63u);
                        ok = ok && (m & b) == 0;
                        m |= b;
                    }
                    dall[t] = m;
                }
                // column d + e: the free rows, minus p[i] + every displacement at distance d + e - i
                uint least = 0xffffffffu, any = 0u;
#pragma unroll
                for (uint e = 0; e <= NE; ++e) {
                    const uint j = MIN_DEPTH + e;
                    uint a = BEYOND;
                    if (j < NMAX) {
                        uint forbidden = rows;
#pragma unroll
                        for (uint i = 0; i < MIN_DEPTH; ++i)
                            if (j - i < MIN_DEPTH) forbidden |= (uint)(dall[j - i] >> ((n - 1u - pp[i]) & 63u));
                        a = fc_edge_rows(n, j, pp[0], p1, full) & ~forbidden;
                    }
                    least = min(least, a);
                    any |= a;
                    if (e == 0u)
                        cand = a;
                    else
                        ahead[e] = a;
                }
#pragma unroll
                for (uint e = 1; e <= NE; ++e) {
                    back[e] = e <= MIN_DEPTH ? pp[MIN_DEPTH - e] : SENT;
                    D[e] = e < MIN_DEPTH ? dall[e] : 0ul;
                }
                k = MIN_DEPTH;
                slot = 0u;
                if (!ok || least == 0u || (full & ~rows & ~any) != 0u)
                    cand = 0u;  // nothing below it: done at the next pass
#if SPLIT
                else
                    ++nd;  // a child that lives (SPLIT 1: a node as the search would have counted it)
#endif
                continue;
            }
        }
        // take the lowest candidate for column k
        const uint v = 31u - clz(cand & (~cand + 1u));
        const uint bit = 1u << v;
        cand ^= bit;
        if (k == n - 1u) {  // a complete array (its domain already holds every rule)
            ++cnt;
            ++nd;
            const uint s = atomic_inc(nfound);
            if (s < capacity) {
#pragma unroll
                for (uint c = 0; c < MIN_DEPTH; ++c) found[s * n + c] = s_pre[c * WG + lane];
#pragma unroll
                for (uint e = 1; e <= NE; ++e)
                    if (e + MIN_DEPTH < NMAX) found[s * n + n - 1u - e] = (uchar)back[e];
                found[s * n + n - 1u] = (uchar)v;
            }
            continue;
        }
        // column k at row v: every domain ahead, the displacements, and whether the node lives
        uint next_ahead[NE + 1];
        uint any = 0u;
        uint least = 0xffffffffu;  // the smallest domain ahead as a number: 0 when one is empty
        const uint s = n - 1u - v, v2 = 2u * v;
#pragma unroll
        for (uint e = 1; e <= NE; ++e) {
            const uint c = v2 - back[e];  // the new displacement's own row: three dots equally spaced
            const uint u = ((uint)(D[e] >> s) & full) | (c < n ? 1u << c : 0u);
            const uint a = ahead[e] & ~(u | bit);
            next_ahead[e - 1] = a;
            least = min(least, a);
            any |= a;
        }
        const bool alive = least != 0u && ((full & ~(rows | bit)) & ~any) == 0u;  // and every free row a column
        if (!alive) continue;
        // push level k (its candidates left and domains ahead)
        ++nd;
        SCAND(k) = cand;
        __local uint *top = s_ahead + slot * WG + lane;
#pragma unroll
        for (uint e = 1; e <= NE; ++e)
            top[(e - 1u) * WG] = ahead[e];  // past the level's own slots: a deeper level's, not yet live
        slot += n - 1u - k;
        // and descend (D[NE] is read at level d only)
#pragma unroll
        for (uint e = 1; e < NE; ++e)
            D[e] |= (1ul << (v + n - 1u)) >> back[e];
        ++k;
        rows |= bit;
#pragma unroll
        for (uint e = NE; e > 1; --e) back[e] = back[e - 1];
        back[1] = v;
        cand = next_ahead[0];
#pragma unroll
        for (uint e = 1; e < NE; ++e) ahead[e] = next_ahead[e];
        ahead[NE] = BEYOND;
    }
}
