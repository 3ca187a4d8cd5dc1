// One-core C yardstick of local search (one walk, no threads), for the OpenCL search kernels:
//   gcc -O2 -march=native -o /tmp/search_ref bench/search_ref.c
//   /tmp/search_ref costas N SEED [TENURE RESET_LIMIT P_LOCMIN RESET [PCT]]     (3 <= N <= 32)
//   /tmp/search_ref nqueens N SEED [TAIL TRIES]                                 (8 <= N <= 10^9)
// Prints one line, `costas n=N seed=S solution=v0,v1,... iterations=I seconds=T` (V[0..n-1], the
// row 0..n-1 of each column) or `nqueens n=N seed=S iterations=I seconds=T first16=r0,...`, after
// an independent full check of the answer (exit 1 if it fails). Seconds are CPU seconds of the
// process (clock()) of the search only (N-Queens: placement plus repair), not the allocation or
// the check. SEARCH_REF_VERBOSE=1 adds a line of counts on stderr. PRNG: xoshiro256** seeded by
// splitmix64(SEED); x < m drawn as (top 32 bits * m) >> 32.
//
// costas: Adaptive Search (Codognet & Diaz; Diaz, Richoux, Codognet, Caniou, Abreu 2012).
//   Configuration: a permutation V[0..n-1], random at the start (Fisher-Yates). Rows d = 1..D,
//   D = (n-1)/2 (Chang: a repeated difference at distance d > (n-1)/2 implies one at a distance
//   <= (n-1)/2). Row d holds the n-d differences V[i+d]-V[i]; cost = sum over rows of W(d) *
//   (occurrences - 1) per difference value, W(d) = n*n - d*d, computed as W(d) * (n - d -
//   popcount(OR over i of 1 << ((V[i+d]-V[i]) mod 64))) (n <= 32: the differences -31..31 land on
//   distinct bits). Error of variable i = sum of W(d) over its pairs (i-d, i) and (i, i+d) whose
//   difference occurs more than once in row d (every occurrence, both ends).
//   One iteration (iterations = the number of times step 1 runs):
//   1. Selection: among the variables not tabu (tabu_until[i] > iter), those of largest error;
//      one of them, mi, uniformly at random (ni = how many tied).
//   2. Evaluation: for every j != mi, the cost of V with V[mi] and V[j] swapped, in full (the
//      OR/popcount formula above; ~2x faster here than counters updated incrementally). best =
//      min(cost, lowest of those); list_j = the j reaching best (if best < cost, the improving
//      ties; else the plateau moves, j whose swap leaves the cost unchanged).
//   3. Acceptance: if best < cost: swap mi with a random j of list_j. Otherwise (no improving
//      swap) a local minimum with probability P_LOCMIN, and always when ni <= 1 and list_j has
//      <= 1 entry; if not a local minimum, a random plateau move from list_j if there is one,
//      else nothing (the next iteration draws mi again). P_LOCMIN = 0 can cycle forever.
//   4. Local minimum: mi becomes tabu (tabu_until[mi] = iter + TENURE); if the number of tabu
//      variables (those skipped in step 1, plus mi) reaches RESET_LIMIT: reset, clear all tabu.
//      With the defaults (TENURE 1, RESET_LIMIT 1) every local minimum resets at once and no
//      variable is ever tabu in step 1: a port needs no tabu array.
//   Reset 0 (the Costas-specific one of AS's costas.c): S = V; imax = one of the variables of
//      largest error (all variables, random ties); candidates built from S, each costed in full:
//      (a) for k = 0..n-1, skipped with probability 0.4 or when |k - imax| <= 1: the segment
//      i = min(imax,k) .. j = max(imax,k) rotated by one cell, left (V[i..j-1] = S[i+1..j],
//      V[j] = S[i]) when imax < D, else right (V[i+1..j] = S[i..j-1], V[i] = S[j]); kept as best
//      if cost < best, or == best with probability 0.2. (b) for c in 1, 2, n-2, n-3: V[t] =
//      (S[t] + c) mod n; kept as best if cost < best, with probability 1/3. (c) the other
//      max-error variables (shuffled), then, if fewer than 3, those of nonzero lower error
//      (shuffled): for the first 3 of that list, s, skipped with probability 1/3 or when s = 0,
//      V = S rotated left by s (V[t] = S[(t+s) mod n]); kept as best if cost < best. The first
//      candidate whose cost is below the cost at entry ends the reset at once (taken); otherwise
//      V = the best candidate even if it costs more (none recorded: S with 2 random swaps).
//   Reset 1 (random): max(2, ceil(PCT * n / 100)) swaps of two random positions.
//   Defaults (COSTAS_* below) = AS's published ones, confirmed by measurement (bench runs of
//   20-200 seeds, orders 16-18): P_LOCMIN 0.35..0.7 equal within noise, 0.2 and 1.0 slightly
//   worse; TENURE/RESET_LIMIT 2/2, 3/2, 5/2 equal to 1/1, 20/5 worse; the random reset (PCT
//   10-30, limits 1/1..20/6) 2.5-3x more time than reset 0.
//
// nqueens: min-conflicts repair (Sosic & Gu, QS4 style), O(N) memory.
//   q[col] = row (a permutation: rows never clash), counters per diagonal dp[r+c], dm[r-c+n-1]
//   (uint8: a count never exceeds 1 + the collisions after placement, kept below 254).
//   Placement: q = identity; for column i = 0 .. n-1: draws of j in [i, n), at most TRIES for
//   i < n-TAIL, one for the last TAIL columns; the first draw whose row q[j] has both diagonals
//   through column i free (or the last draw) is swapped into column i and counted (a
//   Fisher-Yates shuffle that rejects attacked rows). Draws come from a ring of 16 random words
//   to prefetch q[j] 16 draws ahead and the counters 8 draws ahead (1.6x at N = 10^7).
//   Repair: a stack of columns, at the start every attacked queen (invariant: every attacking
//   pair has a member on the stack). Loop: x = top; if x is no longer attacked, pop it; else
//   draw y != x uniformly; swap the rows of x and y if that lowers the collisions (sum over
//   diagonals of count - 1), then pop x and push x, then y, each if attacked. Each swap tried is
//   one iteration. 50 n + 1000 failed tries in a row (small n in a local minimum) start a fresh
//   placement. Defaults: TAIL 50 (n/2 below 100), TRIES 200 (TAIL 20-200, TRIES 50-1000 within
//   noise at 10^6: the placement is the time).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint8_t u8;

// ---------------------------------------------------------------------------------------------
// PRNG: xoshiro256**, seeded by splitmix64.
static u64 rs[4];
static inline u64 rotl(u64 x, int k) { return (x << k) | (x >> (64 - k)); }
static inline u64 rnd64(void)
{
    u64 r = rotl(rs[1] * 5, 7) * 9, t = rs[1] << 17;
    rs[2] ^= rs[0];
    rs[3] ^= rs[1];
    rs[1] ^= rs[2];
    rs[0] ^= rs[3];
    rs[2] ^= t;
    rs[3] = rotl(rs[3], 45);
    return r;
}
static inline u32 below(u32 m) { return (u32)(((rnd64() >> 32) * (u64)m) >> 32); }  // [0, m)
static inline int chance(u32 p32) { return (u32)(rnd64() >> 32) < p32; }          // P = p32 / 2^32
static void seed_rng(u64 s)
{
    for (int i = 0; i < 4; ++i) {
        u64 z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        rs[i] = z ^ (z >> 31);
    }
}
#define P32(p) ((u32)((p) * 4294967296.0 > 4294967295.0 ? 4294967295.0 : (p) * 4294967296.0))

// ---------------------------------------------------------------------------------------------
// Costas: Adaptive Search.
#define MAXN 32
#define COSTAS_TENURE 1       // tabu tenure of a local minimum (iterations)
#define COSTAS_RESET_LIMIT 1  // reset when this many variables are tabu
#define COSTAS_P_LOCMIN 0.5   // no improving swap: local minimum with this probability, else plateau
#define COSTAS_RESET 0        // 0: the Costas-specific reset, 1: random swaps
#define COSTAS_PCT 10         // random reset: percentage of variables
#define INL static inline __attribute__((always_inline))

struct params {
    int tenure, rlimit, rtype, pct;
    u32 plm32;
};
static int V[MAXN], S[MAXN], B[MAXN], err[MAXN], cost;
static long long iter, resets, locmins, swaps;

// Cost of v in full: row d holds n-d differences and popcount(OR of 1 << (difference mod 64))
// distinct values (n <= 32: differences -31..31 land on distinct bits), so n-d minus that repeats.
INL int full_cost(const int *v, const int n)
{
    int c = 0;
#pragma GCC unroll 16
    for (int d = 1; d <= (n - 1) / 2; ++d) {
        u64 m = 0;
#pragma GCC unroll 32
        for (int i = 0; i + d < n; ++i) m |= 1ull << ((v[i + d] - v[i]) & 63);
        c += (n * n - d * d) * (n - d - __builtin_popcountll(m));
    }
    return c;
}

// Errors and cost from V: per row, seen = OR of the difference bits, dup = the bits seen twice.
INL void rebuild(const int n)
{
    memset(err, 0, sizeof err);
    cost = 0;
    for (int d = 1; d <= (n - 1) / 2; ++d) {
        u64 seen = 0, dup = 0;
        for (int i = 0; i + d < n; ++i) {
            u64 b = 1ull << ((V[i + d] - V[i]) & 63);
            dup |= seen & b;
            seen |= b;
        }
        cost += (n * n - d * d) * (n - d - __builtin_popcountll(seen));
        if (!dup) continue;
        for (int i = 0; i + d < n; ++i) {
            int w = (n * n - d * d) & -(int)(dup >> ((V[i + d] - V[i]) & 63) & 1);
            err[i] += w, err[i + d] += w;
        }
    }
}

INL void reset_random(int pct, const int n)
{
    int k = (pct * n + 99) / 100;
    if (k < 2) k = 2;
    while (k--) {
        int i = below(n), j = below(n), t = V[i];
        V[i] = V[j], V[j] = t;
    }
}

INL void reset_costas(const int n)
{
    const int D = (n - 1) / 2;
    int cost0 = cost, best = 1 << 30, have = 0, c;
    int list[MAXN], nl = 0, max = -1;
    memcpy(S, V, sizeof(int) * n);
    for (int i = 0; i < n; ++i) {
        if (err[i] > max) max = err[i], nl = 0;
        if (err[i] == max) list[nl++] = i;
    }
    for (int t = nl - 1; t > 0; --t) {  // shuffle the max-error variables
        int u = below(t + 1), x = list[t];
        list[t] = list[u], list[u] = x;
    }
    int imax = list[--nl];
    for (int k = 0; k < n; ++k) {  // (a) rotate a segment ending or starting at imax by one cell
        if (chance(P32(0.4))) continue;
        int i = imax < k ? imax : k, j = imax < k ? k : imax;
        if (j - i <= 1) continue;
        if (imax < D) {
            memmove(V + i, S + i + 1, sizeof(int) * (j - i));
            V[j] = S[i];
        } else {
            memmove(V + i + 1, S + i, sizeof(int) * (j - i));
            V[i] = S[j];
        }
        if ((c = full_cost(V, n)) < cost0) return;
        if (c < best || (c == best && chance(P32(0.2)))) best = c, have = 1, memcpy(B, V, sizeof(int) * n);
        memcpy(V + i, S + i, sizeof(int) * (j - i + 1));
    }
    const int add[4] = {1, 2, n - 2, n - 3};
    for (int a = 0; a < 4; ++a) {  // (b) add a constant to every value, mod n
        for (int i = 0; i < n; ++i) V[i] = S[i] + add[a] >= n ? S[i] + add[a] - n : S[i] + add[a];
        if ((c = full_cost(V, n)) < cost0) return;
        if (c < best && chance(P32(1.0 / 3))) best = c, have = 1, memcpy(B, V, sizeof(int) * n);
    }
    int ne = nl;  // (c) rotate the whole array to start at another erroneous variable
    if (ne < 3) {
        for (int i = 0; i < n; ++i)
            if (err[i] > 0 && err[i] < max) list[ne++] = i;
        for (int t = ne - 1; t > nl; --t) {
            int u = nl + below(t - nl + 1), x = list[t];
            list[t] = list[u], list[u] = x;
        }
    }
    for (int k = 0; k < 3 && k < ne; ++k) {
        int s = list[k];
        if (s == 0 || chance(P32(1.0 / 3))) continue;
        memcpy(V, S + s, sizeof(int) * (n - s));
        memcpy(V + n - s, S, sizeof(int) * s);
        if ((c = full_cost(V, n)) < cost0) return;
        if (c < best) best = c, have = 1, memcpy(B, V, sizeof(int) * n);
    }
    if (have) memcpy(V, B, sizeof(int) * n);
    else { memcpy(V, S, sizeof(int) * n); reset_random(0, n); }
}

INL void walk(const struct params *p, const int n)
{
    long long tabu[MAXN] = {0};
    int li[MAXN], lj[MAXN];
    rebuild(n);
    while (cost > 0) {
        ++iter;
        int ni = 0, max = -1, marked = 0;
        for (int i = 0; i < n; ++i) {  // 1. selection
            if (tabu[i] > iter) { ++marked; continue; }
            if (err[i] > max) max = err[i], ni = 0;
            if (err[i] == max) li[ni++] = i;
        }
        if (ni == 0) {  // everything tabu (only with RESET_LIMIT > n)
            memset(tabu, 0, sizeof tabu);
            continue;
        }
        int mi = li[below(ni)], best = cost, nj = 0;
        for (int j = 0; j < n; ++j) {  // 2. every swap with mi, costed in full
            if (j == mi) continue;
            int t = V[mi];
            V[mi] = V[j], V[j] = t;
            int x = full_cost(V, n);
            V[j] = V[mi], V[mi] = t;
            if (x <= best) {
                if (x < best) best = x, nj = 0;
                lj[nj++] = j;
            }
        }
        if (best >= cost && (chance(p->plm32) || (ni <= 1 && nj <= 1))) {  // 4. local minimum
            ++locmins;
            tabu[mi] = iter + p->tenure;
            if (marked + 1 >= p->rlimit) {
                ++resets;
                if (p->rtype == 0) reset_costas(n);
                else reset_random(p->pct, n);
                memset(tabu, 0, sizeof tabu);
                rebuild(n);
            }
            continue;
        }
        if (nj == 0) continue;  // 3. nothing better, no local minimum drawn, no plateau move
        int j = lj[below(nj)], t = V[mi];
        V[mi] = V[j], V[j] = t;
        ++swaps;
        rebuild(n);
    }
}

static void walk_any(const struct params *p, int n) { walk(p, n); }

// The walk compiled once per order 10..24 (loops unrolled on a constant n: ~2x), else generic.
static void walk_n(const struct params *p, int n)
{
    switch (n) {
#define W_(k) case k: walk(p, k); break;
        W_(10) W_(11) W_(12) W_(13) W_(14) W_(15) W_(16) W_(17) W_(18) W_(19) W_(20) W_(21) W_(22)
        W_(23) W_(24)
#undef W_
    default: walk_any(p, n);
    }
}

static int costas_check(const int *v, int n)  // independent: a permutation, all distances, all pairs
{
    u8 used[MAXN] = {0}, seen[2 * MAXN];
    for (int i = 0; i < n; ++i) {
        if (v[i] < 0 || v[i] >= n || used[v[i]]) return 0;
        used[v[i]] = 1;
    }
    for (int d = 1; d < n; ++d) {
        memset(seen, 0, sizeof seen);
        for (int i = 0; i + d < n; ++i)
            if (seen[v[i + d] - v[i] + n]++) return 0;
    }
    return 1;
}

static int run_costas(int argc, char **argv, int n, u64 seed)
{
    struct params p = {argc > 4 ? atoi(argv[4]) : COSTAS_TENURE, argc > 5 ? atoi(argv[5]) : COSTAS_RESET_LIMIT,
                       argc > 7 ? atoi(argv[7]) : COSTAS_RESET, argc > 8 ? atoi(argv[8]) : COSTAS_PCT,
                       P32(argc > 6 ? atof(argv[6]) : COSTAS_P_LOCMIN)};
    clock_t t0 = clock();
    for (int i = 0; i < n; ++i) V[i] = i;
    for (int i = n - 1; i > 0; --i) {
        int j = below(i + 1), t = V[i];
        V[i] = V[j], V[j] = t;
    }
    walk_n(&p, n);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (!costas_check(V, n)) {
        fprintf(stderr, "costas n=%d seed=%llu: check FAILED\n", n, (unsigned long long)seed);
        return 1;
    }
    printf("costas n=%d seed=%llu solution=", n, (unsigned long long)seed);
    for (int i = 0; i < n; ++i) printf("%s%d", i ? "," : "", V[i]);
    printf(" iterations=%lld seconds=%.4f\n", iter, secs);
    if (getenv("SEARCH_REF_VERBOSE"))
        fprintf(stderr, "  swaps=%lld locmins=%lld resets=%lld it/s=%.0f\n", swaps, locmins, resets,
                iter / (secs > 0 ? secs : 1e-9));
    return 0;
}

// ---------------------------------------------------------------------------------------------
// N-Queens: min-conflicts.
static u32 *q, *stk;
static u8 *dp, *dm;
static long long N;
static u32 N1;  // N - 1: dm index r + N1 - c, never below 0 in u32

static inline int attacked(u32 x) { return dp[q[x] + x] > 1 || dm[q[x] + N1 - x] > 1; }

// Swap the rows of columns x and y if that lowers the collisions; returns 1 if done.
static inline int try_swap(u32 x, u32 y)
{
    u32 rx = q[x], ry = q[y];
    u8 *p1 = dp + rx + x, *p2 = dp + ry + y, *m1 = dm + (rx + N1 - x), *m2 = dm + (ry + N1 - y);
    u8 *p3 = dp + ry + x, *p4 = dp + rx + y, *m3 = dm + (ry + N1 - x), *m4 = dm + (rx + N1 - y);
    int delta = 0;
    delta -= (*p1)-- > 1;
    delta -= (*p2)-- > 1;
    delta -= (*m1)-- > 1;
    delta -= (*m2)-- > 1;
    delta += (*p3)++ >= 1;
    delta += (*p4)++ >= 1;
    delta += (*m3)++ >= 1;
    delta += (*m4)++ >= 1;
    if (delta < 0) {
        q[x] = ry, q[y] = rx;
        return 1;
    }
    --*p3, --*p4, --*m3, --*m4;
    ++*p1, ++*p2, ++*m1, ++*m2;
    return 0;
}

// Placement; returns the collisions it leaves (sum over diagonals of count - 1). The draws come
// from a ring of PF random words, so that the row q[j] of a draw PF tries ahead and the diagonal
// counters of a draw PF/2 ahead are prefetched (j = i + u * (N - i) >> 32 with the current i:
// the column moves on by a few cells at most meanwhile, the same cache line or the next); the
// loads are hints only, every try reads q[j] afresh.
#ifndef PF
#define PF 16
#endif
static long long place(long long tail, int tries)
{
    memset(dp, 0, 2 * N);
    memset(dm, 0, 2 * N);
    for (long long i = 0; i < N; ++i) q[i] = (u32)i;
    u32 ring[PF];
    for (int k = 0; k < PF; ++k) ring[k] = (u32)(rnd64() >> 32);
    long long coll = 0, lim = N - tail;
    unsigned k = 0;
    if (lim < 0) lim = 0;
    for (u32 i = 0; i < N; ++i) {
        u32 j = 0, r = 0, m = (u32)N - i;
        int t = i < lim ? tries : 1;
        for (; t > 0; --t) {
            u32 u = ring[k % PF];
            u32 un = ring[k % PF] = (u32)(rnd64() >> 32);  // used PF tries from now
            __builtin_prefetch(q + i + (u32)(((u64)un * m) >> 32));
            u32 j2 = i + (u32)(((u64)ring[(k + PF / 2) % PF] * m) >> 32), r2 = q[j2];
            __builtin_prefetch(dp + r2 + i);
            __builtin_prefetch(dm + r2 + N1 - i);
            ++k;
            j = i + (u32)(((u64)u * m) >> 32);
            r = q[j];
            if (!dp[r + i] && !dm[r + N1 - i]) break;
        }
        q[j] = q[i], q[i] = r;
        coll += (dp[r + i]++ > 0) + (dm[r + N1 - i]++ > 0);
    }
    return coll;
}

static int nqueens_check(void)  // independent: fresh bitmaps of rows and both diagonals
{
    u64 *rows = calloc((N + 63) / 64, 8), *a = calloc((2 * N + 63) / 64, 8), *b = calloc((2 * N + 63) / 64, 8);
    int ok = rows && a && b;
    for (long long c = 0; ok && c < N; ++c) {
        long long r = q[c], s = r + c, t = r - c + N - 1;
        if (r < 0 || r >= N || (rows[r >> 6] >> (r & 63) & 1) || (a[s >> 6] >> (s & 63) & 1) ||
            (b[t >> 6] >> (t & 63) & 1))
            ok = 0;
        else
            rows[r >> 6] |= 1ull << (r & 63), a[s >> 6] |= 1ull << (s & 63), b[t >> 6] |= 1ull << (t & 63);
    }
    free(rows), free(a), free(b);
    return ok;
}

static int run_nqueens(int argc, char **argv, u64 seed)
{
    long long tail = argc > 4 ? atoll(argv[4]) : -1;
    int tries = argc > 5 ? atoi(argv[5]) : 0;
    if (tail < 0) tail = N < 100 ? N / 2 : 50;
    if (tries <= 0) tries = 200;
    q = malloc(N * sizeof(u32));
    dp = malloc(2 * N);
    dm = malloc(2 * N);
    if (!q || !dp || !dm) { fprintf(stderr, "out of memory\n"); return 2; }
    u32 cap = 0;
    stk = NULL;
    clock_t t0 = clock();
    long long iter = 0, restarts = 0, coll = 0;
    for (;;) {
        coll = place(tail, tries);
        if (N > 255 && coll > 253) {  // a count never exceeds 1 + coll: keep the u8 counters safe
            fprintf(stderr, "nqueens: placement left %lld collisions (TAIL/TRIES too small)\n", coll);
            return 2;
        }
        u32 top = 0;
        u32 need = (u32)(N < 2 * coll + 16 ? N : 2 * coll + 16);
        for (u32 x = 0; x < N; ++x) {
            if (!attacked(x)) continue;
            if (top == cap) { cap = cap ? 2 * cap : need; stk = realloc(stk, cap * sizeof(u32)); }
            stk[top++] = x;
        }
        long long fails = 0, limit = 50 * N + 1000;
        while (top > 0 && fails < limit) {
            u32 x = stk[top - 1];
            if (!attacked(x)) { --top; continue; }
            u32 y = below((u32)N - 1);
            y += y >= x;
            ++iter;
            if (!try_swap(x, y)) { ++fails; continue; }
            fails = 0;
            --top;
            if (top + 2 > cap) { cap = 2 * cap + 16; stk = realloc(stk, cap * sizeof(u32)); }
            if (attacked(x)) stk[top++] = x;
            if (attacked(y)) stk[top++] = y;
        }
        if (top == 0) break;
        ++restarts;
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (!nqueens_check()) {
        fprintf(stderr, "nqueens n=%lld seed=%llu: check FAILED\n", N, (unsigned long long)seed);
        return 1;
    }
    printf("nqueens n=%lld seed=%llu iterations=%lld seconds=%.4f first16=", N, (unsigned long long)seed, iter, secs);
    for (long long i = 0; i < N && i < 16; ++i) printf("%s%u", i ? "," : "", q[i]);
    printf("\n");
    if (getenv("SEARCH_REF_VERBOSE"))
        fprintf(stderr, "  collisions after placement=%lld restarts=%lld\n", coll, restarts);
    free(q), free(dp), free(dm), free(stk);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "costas")) {
        int n = atoi(argv[2]);
        if (n < 3 || n > MAXN) { fprintf(stderr, "costas: 3 <= N <= %d\n", MAXN); return 2; }
        seed_rng(strtoull(argv[3], NULL, 10));
        return run_costas(argc, argv, n, strtoull(argv[3], NULL, 10));
    }
    if (argc >= 4 && !strcmp(argv[1], "nqueens")) {
        N = atoll(argv[2]);
        N1 = (u32)(N - 1);
        if (N < 8 || N > 1000000000) { fprintf(stderr, "nqueens: 8 <= N <= 10^9\n"); return 2; }
        seed_rng(strtoull(argv[3], NULL, 10));
        return run_nqueens(argc, argv, strtoull(argv[3], NULL, 10));
    }
    fprintf(stderr, "usage: search_ref costas N SEED [TENURE RESET_LIMIT P_LOCMIN RESET PCT]\n"
                    "       search_ref nqueens N SEED [TAIL TRIES]\n");
    return 2;
}
