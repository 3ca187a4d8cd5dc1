// Costas-array search orders, node counts (placements tried) against costas_ref.c's fc (issue 37, 2026-11-26 at d41c09a;
// figures in bench/NOTES.md):
//   gcc -O3 -march=native -o /tmp/costas_orders bench/costas_orders.c && /tmp/costas_orders N VARIANT [MODE] [part=R]
//   e.g. /tmp/costas_orders 14 mrv+rankmid+inc centre   (the fastest per node; +inc: see search_inc)
// MODE: none (all arrays), sym (costas_ref's edge rule), centre (the group {id, H, V, HV} broken around the
//   centre, see centre_filter; total = sum of orbit sizes, the 8-fold classes filtered at the leaves),
//   brute (all arrays, orbits counted by minimal keys), check (brute, then centre, compared array by array).
//   part=R: only row R for the first reading column; the parts sum to the whole run. Reading order,
//   rankmid and mid: odd n m,m-1,m+1,...; even n m0,m1,m0-1,m1+1,...
// All variants keep full forward checking: every unplaced column's row domain holds exactly the rows
// that are consistent with all placed dots (pairs with every placed column, plus the "midpoint" case
// of two placed columns symmetric around the unplaced one), and a node is dropped when a column's
// domain is empty or a free row is in no unplaced column's domain (what costas_ref fc does; for the
// left-to-right order the two are identical).
// Usage: costas_orders N ORDER[+FLAG...] [MODE]    (-DVERIFY: re-check every leaf from scratch, and with
//   +inc every domain too; -DSTATS: +inc prints its expanded nodes; -DEXP=1 or 2: +inc's table updates
//   done 3 times, propagation twice, same tree: the time a part costs, for lack of hardware counters)
// ORDER:
//   ltr      static columns 0..n-1, fast path: newest-column check only (exactly costas_ref fc; complete
//            for this order because a collision with the new column always shares a side with it)
//   ltrfull  static 0..n-1 with the general full recompute (same nodes as ltr)
//   alt      static 0,n-1,1,n-2,...       mid  static middle-out m,m-1,m+1,m-2,... (m=(n-1)/2)
//   mrv      dynamic: unplaced column with the smallest domain (ties leftmost, or see +rankmid)
//   mrve     mrv, ties nearest an end
//   dual     dynamic: unplaced column or free row with the fewest candidates (a row only when
//            strictly fewer; branch over that row's candidate columns)
//   dualp/mrvp = dual/mrve + pair;  dualh = dual + per-distance count bound (no gain)
// FLAGS: +rankmid  ties broken by middle-out rank (nearest the centre first)   <- the key tie rule
//        +pair     pair check: every two unplaced columns a<b must keep some r1 in dom a, r2 in dom b,
//                  r1!=r2, with r2-r1 unused at distance b-a
//        +match    perfect matching columns<->free rows (Hall); +sac one pass of singleton consistency
//                  (lookahead placements counted separately); +adj, +rowtie, +first0, +firstedge, +penK:
//                  other tie rules tried (no gain)
//        +inc      the same tree and counts at less cost a node: incremental domains from tables of the
//                  placed dots' vectors and sums (search_inc); the column orders only (not dual, +match,
//                  +sac, dualh or the other tie rules)
// sym: p[0] = min of the 8 edge offsets and, with p[0]=0, p[1] <= column of row 1 (costas_ref's rule),
//      applied as domain restrictions once the columns/rows involved are known, checked in full at leaves.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
typedef uint32_t u32;

static int n;
static u32 full;
static int p[32];          // row of column j, -1 while unplaced
static int colOf[32];      // column of row r, -1 while free
static u64 D[32], R[32];   // per distance d: used differences (right - left) + n-1, and negated
static u32 dom[34][32];    // dom[depth][j]: rows column j may take at this depth (0 once placed)
static u32 placedCols, placedRows;
static long long nodes, found;
static int ord[32];
enum { V_LTR, V_LTRFULL, V_ALT, V_MID, V_MRV, V_MRVE, V_DUAL, V_DUALP, V_MRVP, V_DUALH };
static int variant, pairchk, hcount, sym, matchchk, rankTie, sac, inc;
static int rnk[32], rowTie, adjTie, firstK, edgePen;
static long long lookahead;
// ---- centre rule state ----
static int centre, cpos[32];                 // cpos: reading order (centre-out, symmetric pairs)
static long long orbitSum, classes8, total8, leafReject;
static int collect;                          // store every leaf as a key (brute / check modes)
static u64 *leaves;
static long long nleaves, capLeaves;

static inline u32 endDist(int j) { return j < n - 1 - j ? j : n - 1 - j; }

static void place(int c, int v)
{
    p[c] = v;
    colOf[v] = c;
    for (u32 m = placedCols; m; m &= m - 1) {
        int c2 = __builtin_ctz(m);
        int d = c > c2 ? c - c2 : c2 - c;
        int delta = c > c2 ? v - p[c2] : p[c2] - v;
        D[d] ^= 1ull << (delta + n - 1);
        R[d] ^= 1ull << (-delta + n - 1);
    }
    placedCols |= 1u << c;
    placedRows |= 1u << v;
}

static void unplace(int c, int v)
{
    placedCols &= ~(1u << c);
    placedRows &= ~(1u << v);
    for (u32 m = placedCols; m; m &= m - 1) {
        int c2 = __builtin_ctz(m);
        int d = c > c2 ? c - c2 : c2 - c;
        int delta = c > c2 ? v - p[c2] : p[c2] - v;
        D[d] ^= 1ull << (delta + n - 1);
        R[d] ^= 1ull << (-delta + n - 1);
    }
    p[c] = -1;
    colOf[v] = -1;
}

// Rows of column j in conflict with placed column c2 (pairs at distance |j-c2| already used).
static inline u32 conflict(int j, int c2)
{
    int s = n - 1 - p[c2];
    return j > c2 ? (u32)(D[j - c2] >> s) : (u32)(R[c2 - j] >> s);
}

// Pair check: columns a<b unplaced, distance d=b-a: is there r1 in dom a, r2 in dom b, r1!=r2, with
// r2-r1 unused at distance d (and the pair alone)?
static inline int pair_ok_mask(u32 da, u32 db, u64 freeD)
{
    for (u32 m = da; m; m &= m - 1) {
        int r1 = __builtin_ctz(m);
        // r2 allowed iff bit (r2 - r1 + n-1) of freeD, i.e. bit r2 of freeD >> (n-1-r1)
        u32 ok = (u32)(freeD >> (n - 1 - r1)) & db & ~(1u << r1);
        if (ok) return 1;
    }
    return 0;
}
static inline int pair_ok(u32 da, u32 db, int d) { return pair_ok_mask(da, db, ~D[d]); }
static u64 E[64];  // +inc: E[32 + d] for d > 0 is D[d] (see search_inc)
static inline int pair_ok_inc(u32 da, u32 db, int d) { return pair_ok_mask(da, db, ~E[32 + d]); }

// Perfect matching between unplaced columns and free rows (Kuhn, bitmasks).
static int mRow[32];
static u32 *mDom;
static int augment(int j, u32 *seen)
{
    for (u32 m = mDom[j] & ~*seen; m; m &= m - 1) {
        int r = __builtin_ctz(m);
        if (*seen >> r & 1) continue;
        *seen |= 1u << r;
        if (mRow[r] < 0 || augment(mRow[r], seen)) {
            mRow[r] = j;
            return 1;
        }
    }
    return 0;
}
static int has_matching(u32 *d, u32 cols)
{
    mDom = d;
    for (int r = 0; r < n; ++r) mRow[r] = -1;
    for (u32 m = cols; m; m &= m - 1) {  // greedy first
        int j = __builtin_ctz(m);
        u32 f = d[j];
        for (; f; f &= f - 1)
            if (mRow[__builtin_ctz(f)] < 0) break;
        if (f) { mRow[__builtin_ctz(f)] = j; continue; }
        u32 seen = 0;
        if (!augment(j, &seen)) return 0;
    }
    return 1;
}

static int propagate(int depth, int c, int v);
// One pass of singleton consistency over the unplaced columns of level lv (dom[lv] built).
static int sac_pass(int lv)
{
    u32 cols = ~placedCols & full;
    for (u32 m = cols; m; m &= m - 1) {
        int j = __builtin_ctz(m);
        u32 keep = 0;
        for (u32 q = dom[lv][j]; q; q &= q - 1) {
            int r = __builtin_ctz(q);
            ++lookahead;
            place(j, r);
            int saved = sac;
            sac = 0;
            int ok = (~placedCols & full) == 0 || propagate(lv, j, r);
            sac = saved;
            unplace(j, r);
            if (ok) keep |= 1u << r;
        }
        if (!keep) return 0;
        dom[lv][j] = keep;
    }
    return 1;
}

// Build dom[depth+1] after placing (c,v). Returns 0 on a wipeout.
static int propagate(int depth, int c, int v)
{
    u32 *od = dom[depth], *nd = dom[depth + 1];
    u32 bit = 1u << v, any = 0;
    u32 free = ~placedCols & full;
    if (variant == V_LTR) {  // exactly costas_ref fc: newest column only (complete for this order)
        for (int j = c + 1; j < n; ++j) {
            u32 x = od[j] & ~bit & ~(u32)(D[j - c] >> (n - 1 - v));
            if (!x) return 0;
            nd[j] = x;
            any |= x;
        }
    } else {
        for (u32 m = free; m; m &= m - 1) {
            int j = __builtin_ctz(m);
            u32 x = od[j] & ~bit;
            for (u32 q = placedCols; q && x; q &= q - 1) x &= ~conflict(j, __builtin_ctz(q));
            // midpoint: c and another placed column symmetric around j
            int d = j > c ? j - c : c - j;
            int o = j > c ? j + d : j - d;
            if (o >= 0 && o < n && p[o] >= 0 && !((p[o] + v) & 1)) x &= ~(1u << ((p[o] + v) >> 1));
            if (!x) return 0;
            nd[j] = x;
            any |= x;
        }
    }
    if (~placedRows & full & ~any) return 0;
    if (pairchk) {
        for (u32 m = free; m; m &= m - 1) {
            int a = __builtin_ctz(m);
            for (u32 m2 = m & (m - 1); m2; m2 &= m2 - 1) {
                int b = __builtin_ctz(m2);
                if (!pair_ok(nd[a], nd[b], b - a)) return 0;
            }
        }
    }
    if (matchchk && !has_matching(nd, free)) return 0;
    if (sac) {
        nd[c] = 0;
        if (!sac_pass(depth + 1)) return 0;
    }
    if (hcount) {  // distance d: pairs not yet both placed <= differences still free (|delta|<=n-1-?)
        for (int d = 1; d < n; ++d) {
            int open = 0;
            for (int i = 0; i + d < n; ++i) open += !((placedCols >> i) & 1) || !((placedCols >> (i + d)) & 1);
            int freeDiffs = 2 * (n - 1) - __builtin_popcountll(D[d]);
            if (open > freeDiffs) return 0;
        }
    }
    return 1;
}

// ---- symmetry breaking (sym): keep p[0] <= (n-1)/2 style corner reductions ----
// The 8 symmetries map the dot in column 0 (row p0) to one of 8 "edge offsets": p[0], n-1-p[0] (the
// left column), p[n-1], n-1-p[n-1] (right column), and the columns of rows 0 and n-1 measured from
// the nearest relevant side. costas_ref keeps arrays with p[0] == min of those 8; we use the same
// rule, applied as soon as the columns/rows involved are known (check at the leaf for the rest).
static int ofs8(int *mn)
{
    int a[8];
    a[0] = p[0];
    a[1] = n - 1 - p[0];
    a[2] = p[n - 1];
    a[3] = n - 1 - p[n - 1];
    a[4] = colOf[0];
    a[5] = n - 1 - colOf[0];
    a[6] = colOf[n - 1];
    a[7] = n - 1 - colOf[n - 1];
    int m = 99;
    for (int i = 0; i < 8; ++i)
        if (a[i] >= 0 && a[i] < m) m = a[i];
    *mn = m;
    return 0;
}

// Partial rule: p[0] must be (once all known) <= every other edge offset. With unknowns, an unknown
// offset can still be anything, so we can only drop when p[0] is known and some known offset is
// smaller, or apply domain restrictions. Implemented as domain restriction in restrict_sym().
static void restrict_sym(int lv)
{
    if (!sym) return;
    u32 *nd = dom[lv];
    if (p[0] < 0) {  // p[0] <= every known edge offset
        int m = 99;
        if (p[n - 1] >= 0) m = p[n - 1] < n - 1 - p[n - 1] ? p[n - 1] : n - 1 - p[n - 1];
        if (colOf[0] >= 0) { int t = colOf[0] < n - 1 - colOf[0] ? colOf[0] : n - 1 - colOf[0]; if (t < m) m = t; }
        if (colOf[n - 1] >= 0) { int t = colOf[n - 1] < n - 1 - colOf[n - 1] ? colOf[n - 1] : n - 1 - colOf[n - 1]; if (t < m) m = t; }
        if (m < 99) nd[0] &= (2u << m) - 1;
        return;
    }
    int p0 = p[0];
    u32 mid = ((full >> p0) << p0) & (full >> p0);  // rows (or columns) p0..n-1-p0
    if (p[n - 1] < 0) nd[n - 1] &= mid;
    u32 edgeRows = (colOf[0] < 0 ? 1u : 0) | (colOf[n - 1] < 0 ? 1u << (n - 1) : 0);
    if (edgeRows)
        for (u32 q = ~placedCols & full & ~mid; q; q &= q - 1) nd[__builtin_ctz(q)] &= ~edgeRows;
    if (p0 == 0) {  // corner: the array no larger than its transpose, p[1] <= colOf[1]
        if (p[1] >= 0 && colOf[1] < 0)
            for (int j = 2; j < p[1]; ++j)
                if (p[j] < 0) nd[j] &= ~2u;
        if (colOf[1] >= 0 && p[1] < 0) nd[1] &= (2u << colOf[1]) - 1;
    }
}

static int sym_leaf_ok(void)
{
    int mn;
    ofs8(&mn);
    if (p[0] != mn) return 0;
    if (p[0] == 0 && p[1] != 1 && colOf[1] < p[1]) return 0;
    return 1;
}

// ---- centre symmetry rule ----
// Group G4 = {id, H, V, HV}: g bit 1 = H (column reversal), bit 2 = V (value reversal).
// S(p) = p read in the order cpos (centre column(s) first, then columns m-k, m+k pairs outward).
// Canonical: S(p) <=lex S(gp) for g = H, V, HV. Costas arrays of n >= 3 have no G4 stabilizer
// besides id (H, V impossible for a permutation; HV would repeat a displacement vector), but the
// leaf computes it anyway. The rule at a node: for each g, scan positions in reading order while
// both p[c] and (gp)[c] are known; a smaller image -> prune, a larger one -> g settled; at the first
// undetermined position only X <= Y is enforced, as domain filtering (sound in any search order,
// it never assumes that the search follows cpos).
static inline u32 le_mask(int t) { return t < 0 ? 0 : t >= n - 1 ? full : (2u << t) - 1; }
static inline u32 ge_mask(int t) { return t <= 0 ? full : t > n - 1 ? 0 : full & ~((1u << t) - 1); }
static int centre_filter(u32 *nd)
{
    for (int g = 1; g < 4; ++g) {
        int gh = g & 1, gv = g & 2;
        for (int i = 0; i < n; ++i) {
            int c = cpos[i], c2 = gh ? n - 1 - c : c;
            int x = p[c], y2 = p[c2];
            if (x >= 0 && y2 >= 0) {
                int y = gv ? n - 1 - y2 : y2;
                if (x < y) break;
                if (x > y) return 0;
                continue;
            }
            if (c == c2) {
                if (!gv) continue;            // H on the centre column: always equal
                nd[c] &= le_mask((n - 1) / 2);  // p[c] <= n-1-p[c]
                if (!nd[c]) return 0;
                break;
            }
            if (x >= 0) {  // c2 unplaced
                nd[c2] &= gv ? le_mask(n - 1 - x) : ge_mask(x);
                if (!nd[c2]) return 0;
            } else if (y2 >= 0) {
                nd[c] &= gv ? le_mask(n - 1 - y2) : le_mask(y2);
                if (!nd[c]) return 0;
            } else {
                if (!nd[c] || !nd[c2]) return 0;
                if (gv) {  // p[c] + p[c2] <= n-1
                    nd[c] &= le_mask(n - 1 - __builtin_ctz(nd[c2]));
                    if (!nd[c]) return 0;
                    nd[c2] &= le_mask(n - 1 - __builtin_ctz(nd[c]));
                } else {   // p[c] <= p[c2]
                    nd[c] &= le_mask(31 - __builtin_clz(nd[c2]));
                    if (!nd[c]) return 0;
                    nd[c2] &= ge_mask(__builtin_ctz(nd[c]));
                }
                if (!nd[c2]) return 0;
            }
            break;
        }
    }
    return 1;
}

// image g of a (g: bit1 H, bit2 V, bit4 transpose applied first), read in cpos order into out
static void image_read(const int *a, int g, int *out)
{
    int b[32], t[32];
    if (g & 4) { for (int i = 0; i < n; ++i) t[a[i]] = i; a = t; }
    for (int c = 0; c < n; ++c) {
        int v = a[g & 1 ? n - 1 - c : c];
        b[c] = g & 2 ? n - 1 - v : v;
    }
    for (int i = 0; i < n; ++i) out[i] = b[cpos[i]];
}
static int cmp_read(const int *x, const int *y) { for (int i = 0; i < n; ++i) if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1; return 0; }
static u64 key_of(const int *s) { u64 k = 0; for (int i = 0; i < n; ++i) k = k << 5 | (u64)s[i]; return k; }
// G4 key (min over id,H,V,HV) and D8 key (min over all 8) of array a, as read in cpos order
static u64 min_key(const int *a, int ng) { u64 m = ~0ull; int s[32]; for (int g = 0; g < ng; ++g) { image_read(a, g, s); u64 k = key_of(s); if (k < m) m = k; } return m; }

// Leaf: full check. Returns the G4 orbit size (4/|stab|) if p is canonical, else 0; counts D8 classes.
static int centre_leaf(void)
{
    int s0[32], s[32], stab = 1;
    image_read(p, 0, s0);
    for (int g = 1; g < 4; ++g) {
        image_read(p, g, s);
        int c = cmp_read(s, s0);
        if (c < 0) return 0;
        if (c == 0) ++stab;
    }
    // D8: the class is counted at the G4-canonical array whose reading is smallest among the 8 images
    int stab8 = 0, minimal = 1;
    for (int g = 0; g < 8; ++g) {
        image_read(p, g, s);
        int c = cmp_read(s, s0);
        if (c < 0) minimal = 0;
        if (c == 0) ++stab8;
    }
    if (minimal) { ++classes8; total8 += 8 / stab8; }
    return 4 / stab;
}

// ---- choosing the branching variable ----
static int choose(int depth, int *isRow)
{
    u32 *d = dom[depth];
    *isRow = 0;
    if (variant <= V_MID) return ord[depth];
    if (firstK > depth) return depth == 0 ? 0 : n - 1;  // edge prefix: column 0, then column n-1
    int best = -1, bc = 99, be = 99;
    for (u32 m = ~placedCols & full; m; m &= m - 1) {
        int j = __builtin_ctz(m);
        int c = __builtin_popcount(d[j]);
        if ((j == 0 || j == n - 1) && c > 1) c += edgePen;
        int e = rankTie ? rnk[j] : variant == V_MRV ? 0 : (int)endDist(j);
        if (adjTie) {
            int nd = 99;
            for (u32 q = placedCols; q; q &= q - 1) {
                int c2 = __builtin_ctz(q), dd = c2 > j ? c2 - j : j - c2;
                if (dd < nd) nd = dd;
            }
            e += 64 * (nd == 99 ? 0 : nd);
        }
        if (c < bc || (c == bc && e < be)) bc = c, be = e, best = j;
    }
    if (variant == V_DUAL || variant == V_DUALP || variant == V_DUALH) {
        if (bc <= 1) return best;
        for (u32 m = ~placedRows & full; m; m &= m - 1) {
            int r = __builtin_ctz(m);
            int c = 0;
            for (u32 q = ~placedCols & full; q; q &= q - 1) c += (d[__builtin_ctz(q)] >> r) & 1;
            int e = rankTie ? rnk[r] : (int)endDist(r);
            if (c < bc || (c == bc && e < be && rowTie)) bc = c, be = e, best = r, *isRow = 1;
        }
    }
    return best;
}

static int verify(void);
// A full array: checked (-DVERIFY), stored (brute/check), counted under the symmetry rule in force.
static void leaf(void)
{
#ifdef VERIFY
    if (!verify()) { fprintf(stderr, "BAD leaf\n"); exit(1); }
#endif
    if (collect) {
        if (nleaves == capLeaves) { capLeaves = capLeaves ? 2 * capLeaves : 4096; leaves = realloc(leaves, capLeaves * sizeof *leaves); }
        int sr[32]; image_read(p, 0, sr); leaves[nleaves++] = key_of(sr);
    }
    if (centre) {
        int w = centre_leaf();
        if (w) ++found, orbitSum += w; else ++leafReject;
    } else if (!sym || sym_leaf_ok()) ++found;
}

static void search(int depth)
{
    int isRow;
    int x = choose(depth, &isRow);
    u32 *d = dom[depth];
    u32 cand;
    if (!isRow)
        cand = d[x];
    else {
        cand = 0;
        for (u32 q = ~placedCols & full; q; q &= q - 1) {
            int j = __builtin_ctz(q);
            if ((d[j] >> x) & 1) cand |= 1u << j;
        }
    }
    for (u32 m = cand; m; m &= m - 1) {
        int y = __builtin_ctz(m);
        int c = isRow ? y : x, v = isRow ? x : y;
        ++nodes;
        place(c, v);
        if (depth + 1 == n)
            leaf();
        else if (propagate(depth, c, v)) {
            dom[depth + 1][c] = 0;
            restrict_sym(depth + 1);
            int ok = 1;
            if (centre) ok = centre_filter(dom[depth + 1]);
            if (ok && (sym || centre)) {
                u32 any = 0;
                for (u32 q = ~placedCols & full; q; q &= q - 1) {
                    u32 x = dom[depth + 1][__builtin_ctz(q)];
                    if (!x) ok = 0;
                    any |= x;
                }
                if (~placedRows & full & ~any) ok = 0;
            }
            if (ok) search(depth + 1);
        }
        unplace(c, v);
    }
}

// ---- +inc: the same search tree at about twice a left-to-right node's cost (5-8x with the full check) ----
// After a new dot N = (c, v), a row x of an unplaced column u becomes inconsistent only through a repeated
// vector that involves X = (u, x) or N. Two pairs {A, B}, {C, F} have the same vector exactly when
// A + F = B + C (a parallelogram), so with X and N among the four dots there are four cases (the others
// were already out of the parent's domain), each one table lookup for column u:
//   X - N = +-(o' - o), a vector of two older dots      E[32 + u - c], a mask per signed column distance
//   X + N = o + o' (o = o' allowed: o the midpoint of X and N)   S[u + c], a mask per column sum
//   X = 2N - o (N the midpoint of X and o)             RF[2c - u], o's row by column
//   2X = N + o (X the midpoint of N and o)             MID[v & 1][2u - c], o's half row by column
// (X - o' = N - o with o' != o is the first case again: X - N = o' - o; X - N = -(N - o) puts X on o.)
// So the tables hold only the older dots: a node's own dot enters them when the node is expanded, in O(k)
// XORs (all pair sums and vectors of a consistent partial array are distinct, so XOR keeps them as
// costas_ref keeps D), and never for a node whose child is a leaf. A node costs O(n - k) column updates of
// a few word operations and O(k) table updates if expanded, instead of the full check's O(k (n - k)).
// The domains are the full check's, so the tree and every count are the same.
// E[32 + dc] (declared above): bit n-1+dr for each used vector (dc, dr), both orientations.
static u64 S[64];              // S[c1 + c2]: bit r1+r2 for each pair of placed dots, a dot with itself too
static u64 RF[96];             // RF[32 + c]: bit 62 - p[c] for a placed column (0 off the board)
static u32 MID[2][96];         // MID[p[c] & 1][32 + c]: bit p[c] >> 1 for a placed column
static int pc[32], pr[32];     // the placed dots in placement order (depth)
static unsigned char cst[34][4];  // centre rule: per level and image g, first reading position undecided
enum { CST_DONE = 255 };          // (the image is larger: settled for the whole subtree)
#ifdef STATS
static long long expanded, depthSum;  // nodes whose propagation passed, and their depths summed
#endif
static u32 tieKey[32];         // the dynamic order's tie rule as a key: rank << 6 | column (unique)
#ifndef PROP_INLINE
#define PROP_INLINE inline __attribute__((always_inline))
#endif

static inline __attribute__((always_inline)) void toggle_inc(int depth, int c, int v)
{
    const int n1 = n - 1;
    u64 eR = 1ull << (n1 + v), eL = 1ull << (n1 - v), s = 1ull << v;
    u64 *Er = E + 32 + c, *El = E + 32 - c, *Sc = S + c;
    for (int i = 0; i < depth; ++i) {
        int co = pc[i], ro = pr[i];
        Er[-co] ^= eR >> ro;
        El[co] ^= eL << ro;
        Sc[co] ^= s << ro;
    }
    Sc[c] ^= s << v;
    RF[32 + c] ^= 1ull << (62 - v);
    MID[v & 1][32 + c] ^= 1u << (v >> 1);
}

// centre_filter resumed where the parent stopped (the positions before it are placed and equal in both
// readings, so they stay so below): the same domains. Returns the columns it narrowed, ~0u on a wipeout
// or a smaller image.
static u32 centre_filter_inc(u32 *nd, const unsigned char *in, unsigned char *out)
{
    u32 changed = 0;
    for (int g = 1; g < 4; ++g) {
        int gh = g & 1, gv = g & 2, i = in[g];
        if (i == CST_DONE) { out[g] = CST_DONE; continue; }
        for (; i < n; ++i) {
            int c = cpos[i], c2 = gh ? n - 1 - c : c;
            int x = p[c], y2 = p[c2];
            if (x >= 0 && y2 >= 0) {
                int y = gv ? n - 1 - y2 : y2;
                if (x < y) { i = CST_DONE; break; }
                if (x > y) return ~0u;
                continue;
            }
            u32 a = nd[c], b = nd[c2];
            if (c == c2) {
                if (!gv) continue;
                a &= le_mask((n - 1) / 2);
            } else if (x >= 0) {
                b &= gv ? le_mask(n - 1 - x) : ge_mask(x);
            } else if (y2 >= 0) {
                a &= gv ? le_mask(n - 1 - y2) : le_mask(y2);
            } else if (gv) {  // p[c] + p[c2] <= n-1
                if (!a || !b) return ~0u;
                a &= le_mask(n - 1 - __builtin_ctz(b));
                if (a) b &= le_mask(n - 1 - __builtin_ctz(a));
            } else {          // p[c] <= p[c2]
                if (!a || !b) return ~0u;
                a &= le_mask(31 - __builtin_clz(b));
                if (a) b &= ge_mask(__builtin_ctz(a));
            }
            if (x < 0) {
                if (!a) return ~0u;
                if (a != nd[c]) nd[c] = a, changed |= 1u << c;
            }
            if (y2 < 0 && c2 != c) {
                if (!b) return ~0u;
                if (b != nd[c2]) nd[c2] = b, changed |= 1u << c2;
            }
            break;
        }
        out[g] = (unsigned char)i;
    }
    return changed;
}

#ifdef VERIFY
// From scratch: may column u take row x next to the placed dots?
static int consistent(int u, int x)
{
    if (colOf[x] >= 0) return 0;
    p[u] = x;
    int ok = 1;
    for (int a = 0; a < n && ok; ++a)
        for (int b = a + 1; b < n && ok; ++b)
            for (int a2 = a; a2 < n && ok; ++a2)
                for (int b2 = a2 + 1; b2 < n && ok; ++b2)
                    if ((a2 != a || b2 != b) && p[a] >= 0 && p[b] >= 0 && p[a2] >= 0 && p[b2] >= 0 &&
                        b - a == b2 - a2 && p[b] - p[a] == p[b2] - p[a2])
                        ok = 0;
    p[u] = -1;
    return ok;
}
#endif

// One pass over the unplaced columns: each domain, the wipeout, the union (free rows) and, for a dynamic
// order, the smallest key. A separate copy per order kind keeps the loop free of the test.
static inline __attribute__((always_inline)) int column_pass(int depth, int c, int v, u32 un, const int dynamic,
                                                              u32 *anyp, u32 *bestp)
{
    const u32 *od = dom[depth], *mid = MID[v & 1] + 32 - c;
    u32 *nd = dom[depth + 1], bit = 1u << v, any = 0, best = ~0u;
    const u64 *Ec = E + 32 - c, *Sc = S + c, *Rc = RF + 32 + 2 * c;
    int sh = n - 1 - v, sm = (v + 1) >> 1, sr = 62 - 2 * v;
    for (u32 m = un; m; m &= m - 1) {
        int u = __builtin_ctz(m);
        u32 x = od[u] & ~bit & ~(u32)(Ec[u] >> sh) & ~(u32)(Sc[u] >> v) & ~(u32)(Rc[-u] >> sr) &
                ~(mid[2 * u] << sm);
        if (!x) return 0;
        nd[u] = x;
        any |= x;
        if (dynamic) {
            u32 key = (u32)__builtin_popcount(x) << 12 | tieKey[u];
            best = key < best ? key : best;
        }
    }
    *anyp = any, *bestp = best;
    return 1;
}

// Domains of level depth+1 after (c, v) was placed at depth, and the next column in *next; 0: the node dies.
// The centre filter narrows a few columns after the column pass, and only those are looked at again.
static PROP_INLINE int propagate_inc(int depth, int c, int v, int *next)
{
    u32 *nd = dom[depth + 1], un = ~placedCols & full, any, best;
    const int dynamic = variant > V_MID;
    if (!(dynamic ? column_pass(depth, c, v, un, 1, &any, &best) : column_pass(depth, c, v, un, 0, &any, &best)))
        return 0;
#ifdef VERIFY
    for (u32 m = un; m; m &= m - 1) {
        int u = __builtin_ctz(m);
        u32 want = 0;
        for (int x = 0; x < n; ++x)
            if ((dom[depth][u] >> x & 1) && consistent(u, x)) want |= 1u << x;
        if (want != nd[u]) { fprintf(stderr, "BAD domain: column %d %x != %x\n", u, nd[u], want); exit(1); }
    }
#endif
    if (pairchk) {  // needs the new dot's vectors: added to E's positive distances for the check only
        for (int i = 0; i < depth; ++i) {
            int d = c - pc[i], h = v - pr[i];
            if (d < 0) d = -d, h = -h;
            E[32 + d] ^= 1ull << (n - 1 + h);
        }
        int ok = 1;
        for (u32 m = un; m && ok; m &= m - 1) {
            int a = __builtin_ctz(m);
            for (u32 m2 = m & (m - 1); m2; m2 &= m2 - 1)
                if (!pair_ok_inc(nd[a], nd[__builtin_ctz(m2)], __builtin_ctz(m2) - a)) { ok = 0; break; }
        }
        for (int i = 0; i < depth; ++i) {
            int d = c - pc[i], h = v - pr[i];
            if (d < 0) d = -d, h = -h;
            E[32 + d] ^= 1ull << (n - 1 + h);
        }
        if (!ok) return 0;
    }
    u32 changed = 0;
    if (sym) restrict_sym(depth + 1), changed = un;
    if (centre) {
        const unsigned char *in = cst[depth];
        if ((in[1] & in[2] & in[3]) == CST_DONE)  // every image settled above: nothing to filter
            memcpy(cst[depth + 1], in, 4);
        else
            changed |= centre_filter_inc(nd, in, cst[depth + 1]);
    }
    if (changed == ~0u) return 0;
    if (changed) {  // narrowed domains: a key only falls (so the minimum is among them), the union is redone
        any = 0;
        for (u32 m = un; m; m &= m - 1) any |= nd[__builtin_ctz(m)];
        for (u32 m = changed; m; m &= m - 1) {
            int u = __builtin_ctz(m);
            if (!nd[u]) return 0;
            u32 key = (u32)__builtin_popcount(nd[u]) << 12 | tieKey[u];
            best = key < best ? key : best;
        }
    }
    if (~placedRows & full & ~any) return 0;
    *next = dynamic ? (int)(best & 63) : ord[depth + 1];
    return 1;
}

// The search as a loop over an explicit stack (a GPU kernel's shape): per level the column and the rows
// left to try; a dot enters the tables when its node is expanded and leaves them on the way back.
static void search_inc(int c)
{
    static int lvC[33];
    static u32 lvM[33];
    int depth = 0;
    lvC[0] = c, lvM[0] = dom[0][c];
    for (;;) {
        u32 m = lvM[depth];
        if (!m) {  // level done: back to the parent and take its dot out
            if (depth == 0) return;
            --depth;
            c = lvC[depth];
            int v = pr[depth];
            if (depth + 2 < n) toggle_inc(depth, c, v);
            placedCols &= ~(1u << c), placedRows &= ~(1u << v);
            p[c] = -1, colOf[v] = -1;
            continue;
        }
        int v = __builtin_ctz(m), next;
        lvM[depth] = m & (m - 1);
        c = lvC[depth];
        ++nodes;
        pc[depth] = c, pr[depth] = v, p[c] = v, colOf[v] = c;
        placedCols |= 1u << c, placedRows |= 1u << v;
#if EXP == 2
        if (depth + 1 < n) {  // timing only: an extra propagation, the same result
            __asm__ volatile("" ::: "memory");
            propagate_inc(depth, c, v, &next);
            __asm__ volatile("" ::: "memory");
        }
#endif
        if (depth + 1 < n && propagate_inc(depth, c, v, &next)) {
#ifdef STATS
            ++expanded, depthSum += depth;
#endif
            if (depth + 2 < n) toggle_inc(depth, c, v);  // not for a leaf's parent: nothing reads them
#if EXP == 1
            if (depth + 2 < n) {  // timing only: two more updates cancel out
                __asm__ volatile("" ::: "memory");
                toggle_inc(depth, c, v);
                __asm__ volatile("" ::: "memory");
                toggle_inc(depth, c, v);
            }
#endif
            ++depth;
            lvC[depth] = next, lvM[depth] = dom[depth][next];
            continue;
        }
        if (depth + 1 == n) leaf();
        placedCols &= ~(1u << c), placedRows &= ~(1u << v);
        p[c] = -1, colOf[v] = -1;
    }
}

static void run_search(void)
{
    if (!inc) { search(0); return; }
    memset(E, 0, sizeof E), memset(S, 0, sizeof S), memset(RF, 0, sizeof RF), memset(MID, 0, sizeof MID);
    memset(cst[0], 0, sizeof cst[0]);
    if (centre) {  // the root's resume positions (the root's domains were filtered in main)
        u32 t[32];
        unsigned char z[4] = {0};
        memcpy(t, dom[0], sizeof t);
        centre_filter_inc(t, z, cst[0]);
    }
    int c = ord[0];
    if (variant > V_MID) {
        u32 best = ~0u;
        for (int u = 0; u < n; ++u) {
            u32 key = (u32)__builtin_popcount(dom[0][u]) << 12 | tieKey[u];
            if (key < best) best = key;
        }
        c = (int)(best & 63);
    }
    search_inc(c);
}

int main(int argc, char **argv)
{
    static const char *names[] = {"ltr", "ltrfull", "alt", "mid", "mrv", "mrve", "dual", "dualp", "mrvp", "dualh"};
    if (argc < 3) {
        fprintf(stderr, "usage: costas_orders N VARIANT [sym]\n");
        return 2;
    }
    n = atoi(argv[1]);
    variant = -1;
    char vname[64];
    snprintf(vname, sizeof vname, "%s", argv[2]);
    char *plus = strchr(vname, '+');
    char flags[64] = "";
    if (plus) { snprintf(flags, sizeof flags, "%s", plus); *plus = 0; }
    for (int i = 0; i < 10; ++i)
        if (!strcmp(vname, names[i])) variant = i;
    matchchk = strstr(flags, "+match") != 0;
    sac = strstr(flags, "+sac") != 0;
    rankTie = strstr(flags, "+rankmid") != 0;
    rowTie = strstr(flags, "+rowtie") != 0;
    adjTie = strstr(flags, "+adj") != 0;
    { char *e = strstr(flags, "+pen"); edgePen = e ? atoi(e + 4) : 0; }
    firstK = strstr(flags, "+first0") ? 1 : strstr(flags, "+firstedge") ? 2 : 0;
    if (variant < 0 || n < 3 || n > 31) return 2;
    const char *mode = argc > 3 ? argv[3] : "";
    sym = !strcmp(mode, "sym");
    centre = !strcmp(mode, "centre");
    int brute = !strcmp(mode, "brute"), check = !strcmp(mode, "check");
    int oldrank = strstr(flags, "+oldrank") != 0;  // even n: costas_orders' m0,m0-1,m1,... instead of pairs
    pairchk = variant == V_DUALP || variant == V_MRVP || strstr(flags, "+pair");
    hcount = variant == V_DUALH;
    full = (1u << n) - 1u;
    for (int i = 0; i < n; ++i) ord[i] = i;
    if (variant == V_ALT)
        for (int i = 0; i < n; ++i) ord[i] = i & 1 ? n - 1 - i / 2 : i / 2;
    // centre-out reading order: odd n m, m-1, m+1, m-2, m+2, ...; even n m0, m1, m0-1, m1+1, ...
    {
        int m = (n - 1) / 2, k = 0;
        if (n % 2 == 0 && !oldrank) {
            for (int s = 0; k < n; ++s) cpos[k++] = m - s, cpos[k++] = m + 1 + s;
        } else {
            cpos[k++] = m;
            for (int s = 1; k < n; ++s) {
                if (m - s >= 0) cpos[k++] = m - s;
                if (m + s < n && k < n) cpos[k++] = m + s;
            }
        }
    }
    if (variant == V_MID || rankTie) {
        for (int i = 0; i < n; ++i) ord[i] = cpos[i];
        for (int i = 0; i < n; ++i) rnk[ord[i]] = i;
    }
    inc = strstr(flags, "+inc") != 0;
    if (inc && ((variant >= V_DUAL && variant != V_MRVP) || hcount || matchchk || sac || adjTie ||
                firstK || edgePen || rowTie)) {
        fprintf(stderr, "+inc: only the column orders (ltr, ltrfull, alt, mid, mrv, mrve, mrvp), +rankmid, +pair\n");
        return 2;
    }
    for (int j = 0; j < n; ++j)  // choose()'s tie rule: rank, else leftmost (mrv) or nearest an end
        tieKey[j] = (u32)(rankTie ? rnk[j] : variant == V_MRV ? 0 : (int)endDist(j)) << 6 | (u32)j;
    u64 *g4keys = 0, *d8keys = 0;
    long long g4orbits = 0, d8orbits = 0, nall = 0;
    if (brute || check) {  // all arrays without symmetry, orbits counted by their minimal keys
        collect = 1;
        for (int j = 0; j < 32; ++j) p[j] = colOf[j] = -1;
        for (int j = 0; j < n; ++j) dom[0][j] = full;
        run_search();
        nall = nleaves;
        g4keys = malloc(nall * sizeof *g4keys);
        d8keys = malloc(nall * sizeof *d8keys);
        for (long long i = 0; i < nall; ++i) {
            int a[32], sr[32];
            for (int j = 0; j < n; ++j) sr[j] = (int)(leaves[i] >> (5 * (n - 1 - j)) & 31);
            for (int j = 0; j < n; ++j) a[cpos[j]] = sr[j];
            g4keys[i] = min_key(a, 4);
            d8keys[i] = min_key(a, 8);
        }
        int cmpu(const void *x, const void *y) { u64 a = *(const u64 *)x, b = *(const u64 *)y; return a < b ? -1 : a > b; }
        qsort(g4keys, nall, sizeof *g4keys, cmpu);
        qsort(d8keys, nall, sizeof *d8keys, cmpu);
        for (long long i = 0; i < nall; ++i) g4orbits += !i || g4keys[i] != g4keys[i - 1], d8orbits += !i || d8keys[i] != d8keys[i - 1];
        printf("n=%d brute: arrays=%lld G4-orbits=%lld D8-orbits=%lld (nodes %lld)\n", n, nall, g4orbits, d8orbits, nodes);
        if (brute) return 0;
        nodes = found = 0;
        nleaves = 0;
        centre = 1;
    }
    for (int j = 0; j < 32; ++j) p[j] = colOf[j] = -1;
    for (int j = 0; j < n; ++j) dom[0][j] = full;
    if (sym) {
        // p[0] <= (n-1)/2 (p[0] is the min of its own pair p0, n-1-p0)
        dom[0][0] &= (1u << ((n + 1) / 2)) - 1;
    }
    if (centre && !centre_filter(dom[0])) return 1;
    if (argc > 4 && !strncmp(argv[4], "part=", 5))  // split the run by the first reading column's row
        dom[0][cpos[0]] &= 1u << atoi(argv[4] + 5);
    clock_t t = clock();
    run_search();
    double s = (double)(clock() - t) / CLOCKS_PER_SEC;
    printf("n=%d %s%s%s nodes=%lld arrays=%lld sec=%.2f ns/node=%.1f", n, names[variant], flags,
           sym ? " sym" : centre ? " centre" : "", nodes, found, s, nodes ? s * 1e9 / nodes : 0.0);
    if (centre) printf(" total=%lld classes8=%lld total8=%lld leafreject=%lld", orbitSum, classes8, total8, leafReject);
#ifdef STATS
    if (inc) printf(" expanded=%lld mean-depth=%.2f", expanded, expanded ? (double)depthSum / expanded : 0.0);
#endif
    printf("\n");
    if (check) {  // every G4-canonical leaf must be its orbit's minimum key, and each orbit found once
        long long ok = 0, bad = 0;
        // leaves hold all leaves reached (canonical or not): keep those that are orbit minima
        int cmpu(const void *x, const void *y) { u64 a = *(const u64 *)x, b = *(const u64 *)y; return a < b ? -1 : a > b; }
        qsort(leaves, nleaves, sizeof *leaves, cmpu);
        long long distinctMin = 0;
        for (long long i = 0; i < nleaves; ++i) {
            u64 *hit = bsearch(&leaves[i], g4keys, nall, sizeof *g4keys, cmpu);
            if (hit) { ++ok; distinctMin += !i || leaves[i] != leaves[i - 1]; }
            else ++bad;
        }
        printf("check: G4-orbits(brute)=%lld canonical(search)=%lld orbit-min leaves=%lld distinct=%lld non-min leaves=%lld D8 classes brute=%lld search=%lld -> %s\n",
               g4orbits, found, ok, distinctMin, bad, d8orbits, classes8,
               g4orbits == found && distinctMin == found && ok == found && d8orbits == classes8 ? "OK" : "MISMATCH");
    }
    (void)verify;
    return 0;
}

static int verify(void)
{
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            for (int k = 0; k < n; ++k)
                for (int l = k + 1; l < n; ++l)
                    if ((i != k || j != l) && j - i == l - k && p[j] - p[i] == p[l] - p[k]) return 0;
    return 1;
}
