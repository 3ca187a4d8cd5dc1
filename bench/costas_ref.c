// A one-core C enumerator of Costas arrays, the yardstick for the OpenCL kernels on a CPU (issue 19):
//   gcc -O2 -march=native -o /tmp/costas_ref bench/costas_ref.c && /tmp/costas_ref 15 [fc]
// Columns left to right, 8-fold symmetry as the kernels have it (p[0] the smallest of the 8 edge
// offsets: p[0] <= (n-1)/2, rows 0 and n-1 only in columns p[0]..n-1-p[0], the last column's row in
// p[0]..n-1-p[0]; with a corner dot, row 1 not in columns 2..p[1]-1), displacements per distance as
// 64-bit masks. Plain: the next column's rows from one
// pass over the distances (what costas_dfs does). With "fc": every future column's domain kept per
// level and the node dropped when a column or a free row has nothing left (what costas_fc does).
// Prints the placements tried and the arrays found by the canonical search (not the total: the host
// of permenum weights them by their classes).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
typedef uint32_t u32;

static int n, p0;
static int p[32];
static u64 D[32];
static u32 full, mid, rows;
static u32 dom[33][32];  // fc: dom[k][j], the rows column j may take once columns 0..k-1 are placed
static long long placements, found;

static u32 canonical(int k, u32 c)
{
    if (k < p0 || k > n - 1 - p0) c &= ~(1u | (1u << (n - 1)));
    if (k == n - 1) c &= mid;
    return c;
}

// A corner array no larger than its transpose: with p[0] = 0, row 1 not in columns 2..p[1]-1 (once
// column 1 is placed).
static u32 transposed(int k, u32 c)
{
    return p0 == 0 && k >= 2 && k < p[1] ? c & ~2u : c;
}

static int fc;

// Column k's candidates m: each placed, then the next column searched (plain or forward checking).
static void search(int k, u32 m)
{
    while (m) {
        u32 bit = m & -m;
        m ^= bit;
        int v = __builtin_ctz(bit);
        ++placements;
        p[k] = v;
        if (k == n - 1) {
            ++found;
            continue;
        }
        if (!fc) {
            u32 c = ~(rows | bit) & full;
            int pk = v;
            for (int d = 1; d <= k; ++d) {  // record column k's displacements, filter column k+1's rows
                int q = p[k - d];
                D[d] ^= 1ull << (v - q + n - 1);
                c &= ~(u32)(D[d] >> (n - 1 - pk));
                pk = q;
            }
            rows |= bit;
            search(k + 1, transposed(k + 1, canonical(k + 1, c)));
            rows ^= bit;
        } else {
            for (int d = 1; d <= k; ++d) D[d] ^= 1ull << (v - p[k - d] + n - 1);
            u32 any = 0, dead = 0;
            for (int j = k + 1; j < n; ++j) {  // every column ahead narrowed at once
                u32 x = dom[k][j] & ~bit & ~(u32)(D[j - k] >> (n - 1 - v));
                if (k == 1) x = transposed(j, x);
                dom[k + 1][j] = x;
                dead |= x == 0;
                any |= x;
            }
            if (!dead && !(~(rows | bit) & full & ~any)) {
                rows |= bit;
                search(k + 1, dom[k + 1][k + 1]);
                rows ^= bit;
            }
        }
        for (int d = 1; d <= k; ++d) D[d] ^= 1ull << (v - p[k - d] + n - 1);
    }
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 0;
    fc = argc > 2 && !strcmp(argv[2], "fc");
    if (n < 2 || n > 31) {
        fprintf(stderr, "usage: costas_ref N [fc]   (2 <= N <= 31)\n");
        return 2;
    }
    full = (1u << n) - 1u;
    clock_t t = clock();
    for (p0 = 0; p0 < (n + 1) / 2; ++p0) {
        memset(D, 0, sizeof D);
        p[0] = p0;
        rows = 1u << p0;
        mid = ((full >> p0) << p0) & (full >> p0);
        ++placements;
        for (int j = 1; j < n; ++j) dom[1][j] = canonical(j, full & ~rows);
        search(1, dom[1][1]);
    }
    printf("order %d %s: %lld placements, %lld arrays found (canonical), %.2f s\n", n, fc ? "fc" : "plain",
           placements, found, (double)(clock() - t) / CLOCKS_PER_SEC);
    return 0;
}
