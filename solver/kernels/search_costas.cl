// Adaptive Search for one Costas array: many independent walks, one per work-group.
//
// A walk is a permutation v (v[c] = row of column c). Its cost sums, over the distances d <= D =
// (N-1)/2, the weight N*N - d*d of every repeated displacement v[c+d] - v[c] in row d of the
// difference triangle (Chang: a repeat at distance d > D implies one at a distance <= D, so these
// rows suffice; cost 0 <=> Costas). A row's repeats are its N - d displacements less the distinct
// ones: the popcount of the OR of one bit per displacement. Each iteration (Codognet & Diaz's
// Adaptive Search, as in AS's costas.c and bench/search_ref.c):
//   1. every variable's error (the weights of its displacements that occur twice or more in their
//      row); the worst variable not marked tabu is chosen (random among ties);
//   2. every lane j prices the swap of that variable with column j; the cheapest is found;
//   3. an improving swap is made (random among ties); otherwise the walk is at a local minimum with
//      probability LOCAL_MIN percent, and always when neither the variable nor the swap had a tie;
//      if not, a swap that keeps the cost is made (random among them), if there is one;
//   4. at a local minimum the variable is marked tabu for TENURE iterations, and once RESET_LIMIT
//      variables are tabu the walk is reset (AS's Costas reset: from the variable of largest error,
//      candidates built by rotating a segment, adding a constant to every row, rotating the whole
//      array; the first below the current cost is taken, else the best of them) and tabu cleared.
// The lanes price the swaps and the reset's candidates side by side; lane 0 draws every random
// number, in one order, from the walk's own splitmix64 state: a walk is a pure function of its
// seed, so the same seed finds the same array whatever the launch sizes.
//
// Walks run in lock step: a launch takes every walk still searching from iteration `start` through
// `steps` more, and walks keep their state in global memory between launches. A walk that reaches
// cost 0 records the iteration it did so (1-based) and stops; every walk stops once it is past the
// earliest such step of the launch (`first`, an atomic min): the answer, the walk that found first
// (lowest index among ties), is then the same at any launch size.
//
// Build options: -DN=order (2..64), -DLANES=work-group size, -DTENURE, -DRESET_LIMIT,
// -DLOCAL_MIN (percent).

#define D ((N - 1) / 2)
#define WEIGHT(d) ((uint)(N * N - (d) * (d)))
#define CANDIDATES (N + 7)  // a reset's: N segment rotations, 4 additions, 3 whole rotations

inline ulong splitmix(ulong *s) {
    ulong z = (*s += 0x9E3779B97F4A7C15UL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

inline uint below(ulong *s, uint k) { return (uint)(((splitmix(s) >> 32) * (ulong)k) >> 32); }

inline bool chance(ulong *s, uint percent) { return below(s, 100) < percent; }

// One bit per displacement x (-(N-1)..N-1) of a row: x mod 64 in one word while N <= 32, else
// x + N - 1 over two words.
#if N > 32
typedef ulong2 bits;
#define NO_BITS ((ulong2)(0, 0))
inline bits bit_of(int x) {
    uint b = x + N - 1;
    return b < 64 ? (ulong2)(1UL << b, 0) : (ulong2)(0, 1UL << (b - 64));
}
inline uint popcount_bits(bits m) { return popcount(m.x) + popcount(m.y); }
inline bool has_bit(bits m, int x) {
    uint b = x + N - 1;
    return ((b < 64 ? m.x >> b : m.y >> (b - 64)) & 1) != 0;
}
#else
typedef ulong bits;
#define NO_BITS 0UL
inline bits bit_of(int x) { return 1UL << (x & 63); }
inline uint popcount_bits(bits m) { return popcount(m); }
inline bool has_bit(bits m, int x) { return ((m >> (x & 63)) & 1) != 0; }
#endif

// The cost of the configuration p (private: the loops unroll and p stays in registers).
inline uint cost_of(const int *p) {
    uint cost = 0;
#pragma unroll
    for (int d = 1; d <= D; d++) {
        bits seen = NO_BITS;
#pragma unroll
        for (int c = 0; c + d < N; c++) seen |= bit_of(p[c + d] - p[c]);
        cost += WEIGHT(d) * (N - d - popcount_bits(seen));
    }
    return cost;
}

// p = v with columns a and b swapped (constant indices into p: it stays in registers).
inline void load_swapped(__local const uchar *v, int a, int b, int *p) {
#pragma unroll
    for (int c = 0; c < N; c++) p[c] = v[c == a ? b : c == b ? a : c];
}

// p = a reset's candidate x built from v: x < N rotates the segment between columns imax and x by
// one cell (left when imax < D, else right); N..N+3 add 1, 2, N-2, N-3 to every row (mod N);
// N+4..N+6 rotate the whole array to start at column shift[x - N - 4].
inline void load_candidate(__local const uchar *v, int x, int imax, __local const int *shift, int *p) {
    const int i = x < N ? min(imax, x) : N, j = x < N ? max(imax, x) : -1;
    const int add = x < N || x >= N + 4 ? 0 : x == N ? 1 : x == N + 1 ? 2 : N - 2 - (x - N - 2);
    const int rot = x >= N + 4 ? shift[x - N - 4] : 0;
    const bool left = imax < D;
#pragma unroll
    for (int c = 0; c < N; c++) {
        int src = c + rot >= N ? c + rot - N : c + rot;
        if (c >= i && c <= j) src = left ? (c == j ? i : c + 1) : (c == i ? j : c - 1);
        const int r = v[src] + add;
        p[c] = r >= N ? r - N : r;
    }
}

// Lane 0's choice of a reset: its variable imax, the candidates it skips (bit x of the mask) and the
// whole rotations' shifts. Draws as AS does: imax random among the largest errors; each segment
// rotation skipped with probability 0.4; the shifts are the other largest-error variables (then
// those of nonzero lower error) in random order, each skipped with probability 1/3.
inline int plan_reset(ulong *state, __local const uint *err, __local ulong *skip, __local int *shift) {
    int list[N], nl = 0;
    uint top = 0;
    for (int k = 0; k < N; k++) top = max(top, err[k]);
    for (int k = 0; k < N; k++)
        if (err[k] == top) list[nl++] = k;
    for (int t = nl - 1; t > 0; t--) {
        int u = below(state, t + 1), x = list[t];
        list[t] = list[u]; list[u] = x;
    }
    const int imax = list[--nl];
    *skip = 0;
    for (int k = 0; k < N; k++)
        if (chance(state, 40) || abs(k - imax) <= 1) *skip |= 1UL << k;
    int ne = nl;
    if (ne < 3) {
        for (int k = 0; k < N; k++)
            if (err[k] > 0 && err[k] < top) list[ne++] = k;
        for (int t = ne - 1; t > nl; t--) {
            int u = nl + below(state, t - nl + 1), x = list[t];
            list[t] = list[u]; list[u] = x;
        }
    }
    for (int k = 0; k < 3; k++) {
        shift[k] = k < ne ? list[k] : 0;
        if (shift[k] != 0 && chance(state, 33)) shift[k] = 0;  // a shift of 0 is skipped
    }
    return imax;
}

// Lane 0 walks the reset's candidates in AS's order: the first below `now` is taken at once;
// otherwise the best (segment ties replace it with probability 0.2, an addition replaces a better
// best only with probability 1/3); -1 when none was priced.
inline int pick_candidate(ulong *state, __local const uint *price, ulong skip, __local const int *shift,
                          uint now) {
    uint best = ~0u;
    int pick = -1;
    for (int x = 0; x < N; x++) {
        if ((skip >> x) & 1) continue;
        if (price[x] < now) return x;
        if (price[x] < best || (price[x] == best && chance(state, 20))) { best = price[x]; pick = x; }
    }
    for (int x = N; x < N + 4; x++) {
        if (price[x] < now) return x;
        if (price[x] < best && below(state, 3) == 0) { best = price[x]; pick = x; }
    }
    for (int x = N + 4; x < CANDIDATES; x++) {
        if (shift[x - N - 4] == 0) continue;
        if (price[x] < now) return x;
        if (price[x] < best) { best = price[x]; pick = x; }
    }
    return pick;
}

__kernel __attribute__((reqd_work_group_size(LANES, 1, 1)))
void costas_walks(__global uchar *values,        // [walks][N]
                  __global ulong *tabu_until,    // [walks][N]
                  __global ulong *rng,           // [walks]
                  __global ulong *found_at,      // [walks]: iterations until cost 0 (+1), 0 while searching
                  __global uint *best,           // [walks]: the lowest cost reached
                  volatile __global uint *first, // the earliest step of this launch any walk found at (~0: none)
                  const ulong seed,              // walk w's seed is seed + w
                  const ulong start,             // iterations done (0: the walks begin)
                  const uint steps) {
    __local uchar v[N];
    __local ulong tabu[N];
    __local bits repeated[D + 1];  // per row: the displacements seen twice or more
    __local uint row_cost[D + 1];
    __local uint err[N], price[CANDIDATES];
    __local int shift[3];
    __local int chosen, imax, stop, reset;
    __local ulong skip;
    const int w = get_group_id(0), lane = get_local_id(0);
    if (start > 0 && found_at[w]) return;  // the whole group leaves together
    ulong state;
    uint low;
    if (start == 0) {  // a new walk: its seed alone decides it
        state = seed + w;
        low = ~0u;
        if (lane == 0) {  // a random permutation (Fisher-Yates)
            for (int c = 0; c < N; c++) v[c] = c;
            for (int c = N - 1; c > 0; c--) {
                int r = below(&state, c + 1);
                uchar t = v[c]; v[c] = v[r]; v[r] = t;
            }
        }
        for (int c = lane; c < N; c += LANES) tabu[c] = 0;
    } else {
        state = rng[w];
        low = best[w];
        for (int c = lane; c < N; c += LANES) {
            v[c] = values[w * N + c];
            tabu[c] = tabu_until[w * N + c];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int p[N];
    for (uint s = 0; s < steps; s++) {
        // 1. each row's repeats, then each variable's error
        for (int d = lane + 1; d <= D; d += LANES) {
            bits seen = NO_BITS, twice = NO_BITS;
            for (int c = 0; c + d < N; c++) {
                const bits b = bit_of(v[c + d] - v[c]);
                twice |= seen & b;
                seen |= b;
            }
            repeated[d] = twice;
            row_cost[d] = WEIGHT(d) * (N - d - popcount_bits(seen));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = lane; k < N; k += LANES) {
            uint e = 0;
            for (int d = 1; d <= D; d++) {
                e += k + d < N && has_bit(repeated[d], v[k + d] - v[k]) ? WEIGHT(d) : 0;
                e += k - d >= 0 && has_bit(repeated[d], v[k] - v[k - d]) ? WEIGHT(d) : 0;
            }
            err[k] = e;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const ulong it = start + s;
        uint cost = 0;
        int ties = 0;  // lane 0: how many variables shared the worst error
        if (lane == 0) {
            for (int d = 1; d <= D; d++) cost += row_cost[d];
            low = min(low, cost);
            if (cost == 0) {
                found_at[w] = it + 1;  // the configuration after `it` iterations (+1: 0 means none)
                atomic_min(first, s);
            }
            stop = cost == 0 || s >= *first;  // a later find could not be the first
            uint worst = 0;
            int pick = -1;
            for (int k = 0; k < N; k++) {
                if (tabu[k] > it) continue;
                if (pick < 0 || err[k] > worst) { worst = err[k]; pick = k; ties = 1; }
                else if (err[k] == worst && below(&state, ++ties) == 0) pick = k;
            }
            chosen = pick;  // -1: every variable tabu (only when RESET_LIMIT > N)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (stop) break;  // every lane reads stop before lane 0 may write it again
        const int i = chosen;
        // 2. price every swap of i
        for (int j = lane; j < N && i >= 0; j += LANES) {
            load_swapped(v, i, j, p);
            price[j] = j == i ? ~0u : cost_of(p);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane == 0) {
            reset = 0;
            if (i < 0) {
                for (int k = 0; k < N; k++) tabu[k] = 0;
            } else {
                uint low_cost = ~0u;
                int j = -1, moves = 0;
                for (int k = 0; k < N; k++) {
                    if (k == i || price[k] > low_cost) continue;
                    if (price[k] < low_cost) { low_cost = price[k]; j = k; moves = 1; }
                    else if (below(&state, ++moves) == 0) j = k;
                }
                if (low_cost > cost) moves = 0;  // no swap keeps the cost
                // 3. improving, else a local minimum or a plateau move
                if (low_cost >= cost && (chance(&state, LOCAL_MIN) || (ties <= 1 && moves <= 1))) {
                    tabu[i] = it + TENURE;  // 4. a local minimum
                    int marked = 0;
                    for (int k = 0; k < N; k++) marked += tabu[k] > it;
                    if (marked >= RESET_LIMIT) {
                        reset = 1;
                        imax = plan_reset(&state, err, &skip, shift);
                    }
                } else if (moves > 0) {
                    uchar t = v[i]; v[i] = v[j]; v[j] = t;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!reset) continue;
        // 4. the reset: every candidate priced side by side, lane 0 picks
        for (int x = lane; x < CANDIDATES; x += LANES) {
            if (x < N ? (skip >> x) & 1 : x >= N + 4 && shift[x - N - 4] == 0) continue;  // skipped
            load_candidate(v, x, imax, shift, p);
            price[x] = cost_of(p);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane == 0) {
            const int x = pick_candidate(&state, price, skip, shift, cost);
            if (x >= 0) {
                load_candidate(v, x, imax, shift, p);
                for (int c = 0; c < N; c++) v[c] = p[c];
            } else {
                for (int r = 0; r < 2; r++) {  // nothing priced: two random swaps
                    int a = below(&state, N), b = below(&state, N);
                    uchar t = v[a]; v[a] = v[b]; v[b] = t;
                }
            }
            for (int k = 0; k < N; k++) tabu[k] = 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int c = lane; c < N; c += LANES) {
        values[w * N + c] = v[c];
        tabu_until[w * N + c] = tabu[c];
    }
    if (lane == 0) {
        rng[w] = state;
        best[w] = low;
    }
}
