// Costas array completion: every work-item takes prefixes (columns 0..depth-1 placed) from a
// global atomic counter and fills columns left to right. For each distance d, used[d] is a
// 64-bit mask of the row differences p[j+d]-p[j] (offset by n-1) already present; the rows a
// new column k may take are the free rows minus, for every d, used[d] shifted by n-1-p[k-d].
//
// Build options: -DNMAX=<n>, -DCANONICAL=1 to search only arrays whose p[0] is the smallest of
// their 8 edge offsets (the host weights them), -DCOUNT_NODES for the node-counting build,
// -DLOCAL_STACKS=1 -DWG=<work-group size> to keep the per-column arrays in __local memory laid
// out [column][lane] (GPUs: dynamically indexed private arrays spill to slow local memory).
// Variants: `dfs` (private arrays, the CPU default) and `lds` (LOCAL_STACKS, the GPU default); the
// retired `lds-unfused` is in bench/NOTES.md.
// Every array found is written to `found` (n bytes each) while capacity lasts; `nfound` counts
// all of them, so the host can see an overflow and re-run with room for every array.

#ifndef NMAX
#define NMAX 32
#endif
#ifndef CANONICAL
#define CANONICAL 0
#endif

#ifndef LOCAL_STACKS
#define LOCAL_STACKS 0
#endif
#if LOCAL_STACKS
#define P(k) s_p[(k) * WG + lane]
#define CAND(k) s_cand[(k) * WG + lane]
#define USED(d) s_used[(d) * WG + lane]
#else
#define P(k) p[k]
#define CAND(k) cand[k]
#define USED(d) used[d]
#endif
// The rows column k may take: free rows, minus every used difference shifted to this column,
// minus (canonical search) the edge rows where p[0] would not be the smallest edge offset.
#if CANONICAL
#define CANONICAL_MASK(k, c)                                                       \
    if ((uint)(k) < p0 || (uint)(k) > n - 1u - p0) c &= ~(1u | (1u << (n - 1u))); \
    if ((uint)(k) == n - 1u) c &= mid_rows;
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

#if LOCAL_STACKS
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
#else
__kernel
#endif
void costas_dfs(const uint n, const uint depth, const uint nstates,
                         __global const uchar *prefixes, __global ulong *counts,
                         __global ulong *nodes, volatile __global uint *next,
                         __global uchar *found, volatile __global uint *nfound,
                         const uint capacity)
{
    const uint full = n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
    const uint sh = n - 1u;
#if LOCAL_STACKS
    __local uint s_p[NMAX * WG];
    __local uint s_cand[NMAX * WG];
    __local ulong s_used[NMAX * WG];
    const uint lane = get_local_id(0);
#else
    uint p[NMAX];
    uint cand[NMAX];
    ulong used[NMAX];
#endif
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
