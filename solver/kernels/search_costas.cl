// Adaptive Search for one Costas array: many independent walks, one per work-group.
//
// A walk is a permutation v (v[c] = row of column c). Its cost sums, over the distances d <= D =
// (N-1)/2, the weight N*N - d*d of every repeated displacement v[c+d] - v[c] in row d of the
// difference triangle (Chang: a repeat at distance d > D implies one at a distance <= D, so these
// rows suffice; cost 0 <=> Costas). Each iteration (Codognet & Diaz's Adaptive Search):
//   1. every variable's error (the weights of the repeats it takes part in); the worst variable
//      not marked tabu is chosen (random among ties);
//   2. every lane j prices the swap of that variable with column j (j = the variable itself prices
//      the current cost) and lane 0 takes the cheapest (random among ties);
//   3. an improving swap is made; a swap that keeps the cost is made with probability PLATEAU/100;
//      otherwise the variable is marked tabu for TENURE iterations, and once RESET_LIMIT variables
//      are tabu the walk is perturbed: RESET_SWAPS random swaps, the tabu marks cleared.
// Lane 0 draws every random number from the walk's own splitmix64 state: a walk is a pure function
// of its seed, so the same seed finds the same array whatever the launch sizes.
//
// Walks run in lock step: a launch takes every walk still searching from iteration `start` through
// `steps` more, and walks keep their state in global memory between launches. A walk that reaches
// cost 0 records the iteration it did so (1-based) and stops; every walk stops once it is past the
// earliest such step of the launch (`first`, an atomic min): the answer, the walk that found first
// (lowest index among ties), is then the same at any launch size.
//
// Build options: -DN=order (2..64), -DLANES=work-group size, -DTENURE, -DRESET_LIMIT,
// -DRESET_SWAPS, -DPLATEAU (percent).

#define D ((N - 1) / 2)
#define WEIGHT(d) ((uint)(N * N - (d) * (d)))

inline ulong splitmix(ulong *s) {
    ulong z = (*s += 0x9E3779B97F4A7C15UL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

inline uint below(ulong *s, uint k) { return (uint)(((splitmix(s) >> 32) * (ulong)k) >> 32); }

// Bit (displacement + N - 1) of a row's seen set, in one or two words (2N - 1 displacements).
#if N > 32
#define SEEN_DECL ulong lo = 0, hi = 0
#define TEST_SET(b, repeat) { uint _b = (b); ulong _m = 1UL << (_b & 63); \
    if (_b < 64) { repeat = (lo & _m) != 0; lo |= _m; } else { repeat = (hi & _m) != 0; hi |= _m; } }
#else
#define SEEN_DECL ulong lo = 0
#define TEST_SET(b, repeat) { ulong _m = 1UL << (b); repeat = (lo & _m) != 0; lo |= _m; }
#endif

// The cost of the configuration p (private: the loops unroll and p stays in registers).
inline uint cost_of(const int *p) {
    uint cost = 0;
#pragma unroll
    for (int d = 1; d <= D; d++) {
        SEEN_DECL;
#pragma unroll
        for (int c = 0; c + d < N; c++) {
            bool repeat;
            TEST_SET((uint)(p[c + d] - p[c] + N - 1), repeat);
            cost += repeat ? WEIGHT(d) : 0;
        }
    }
    return cost;
}

// The error of variable k: the weights of the repeats of its two displacements in each row
// (k's own displacements read from v: an index that is not a constant would move p out of registers).
inline uint error_of(const int *p, __local const uchar *v, int k) {
    uint err = 0;
#pragma unroll
    for (int d = 1; d <= D; d++) {
        int right = k + d < N ? v[min(k + d, N - 1)] - v[k] : 4 * N;  // 4N: no displacement
        int left = k - d >= 0 ? v[k] - v[max(k - d, 0)] : 4 * N;
        uint same = 0;
#pragma unroll
        for (int c = 0; c + d < N; c++) {
            int x = p[c + d] - p[c];
            same += (x == right && c != k) + (x == left && c + d != k);
        }
        err += same * WEIGHT(d);
    }
    return err;
}

// p = v with columns a and b swapped (constant indices into p: it stays in registers).
inline void load_swapped(__local const uchar *v, int a, int b, int *p) {
#pragma unroll
    for (int c = 0; c < N; c++) p[c] = v[c == a ? b : c == b ? a : c];
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
    __local uint score[LANES];
    __local int chosen, stop;
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
        // 1. the worst variable not tabu
        uint cost = 0;
        for (int k = lane; k < N; k += LANES) {
            load_swapped(v, k, k, p);
            score[k] = error_of(p, v, k);
            if (k == 0) cost = cost_of(p);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const ulong it = start + s;
        if (lane == 0) {
            low = min(low, cost);
            if (cost == 0) {
                found_at[w] = it + 1;  // the configuration after `it` iterations (+1: 0 means none)
                atomic_min(first, s);
            }
            stop = cost == 0 || s >= *first;  // a later find could not be the first
            uint worst = 0, ties = 0;
            int pick = -1;
            for (int k = 0; k < N; k++) {
                if (tabu[k] > it) continue;
                if (pick < 0 || score[k] > worst) { worst = score[k]; pick = k; ties = 1; }
                else if (score[k] == worst && below(&state, ++ties) == 0) pick = k;
            }
            chosen = pick;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (stop) break;  // every lane reads stop before lane 0 may write it again
        const int i = chosen;
        // 2. price every swap of i (with itself: the current cost)
        for (int j = lane; j < N; j += LANES) {
            load_swapped(v, i, j, p);
            score[j] = cost_of(p);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane == 0) {
            const uint now = score[i];
            uint low_cost = ~0u, ties = 0;
            int j = -1;
            for (int k = 0; k < N; k++) {
                if (k == i) continue;
                if (score[k] < low_cost) { low_cost = score[k]; j = k; ties = 1; }
                else if (score[k] == low_cost && below(&state, ++ties) == 0) j = k;
            }
            bool move = low_cost < now || (low_cost == now && below(&state, 100) < PLATEAU);
            if (move) {
                uchar t = v[i]; v[i] = v[j]; v[j] = t;
            } else {
                tabu[i] = it + 1 + TENURE;
                int marked = 0;
                for (int k = 0; k < N; k++) marked += tabu[k] > it + 1;
                if (marked >= RESET_LIMIT) {  // 3. perturb
                    for (int r = 0; r < RESET_SWAPS; r++) {
                        int a = below(&state, N), b = below(&state, N);
                        uchar t = v[a]; v[a] = v[b]; v[b] = t;
                    }
                    for (int k = 0; k < N; k++) tabu[k] = 0;
                }
            }
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
