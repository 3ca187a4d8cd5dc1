// Min-conflicts repair for N-Queens, in parallel over the queens of a board, for many boards (walks).
//
// A board is a permutation q (q[c] = row of the queen in column c), so rows never clash; a count per
// diagonal (row + col, and row - col + N - 1) says which queens are attacked. A board starts as a
// random permutation (a Feistel bijection of the columns, cycle-walked into [0, N)), placed greedily
// segment by segment (queens_place: most queens land on free diagonals), and is repaired in rounds: a scan lists the queens in conflict (and settles the walks with none: solved), then
// BLOCK passes work on that list only (a queen the passes bring into conflict waits for the next
// scan: on a large board the list is a small part of it). A pass is three launches over the list:
//   propose: a queen still in conflict prices TRIES swaps with random columns (the change in
//            attacking pairs, from the pass's counts) and proposes the best when it removes pairs
//            (or, with probability NOISE/1024, when it does not: small boards have local minima);
//            it claims both queens and the eight diagonals the swap touches with its priority
//            (atomic min; priorities are a bijection of the column, shuffled each pass);
//   apply:   a proposal that won every claim swaps its queens and moves the counts. Swaps applied in
//            one pass share no queen and no diagonal, so each changes the pairs by exactly what it
//            priced (without the diagonal claims, concurrent swaps onto one free diagonal stalled
//            N = 1000 at half its queens in conflict);
//   release: every proposal clears what it claimed, ready for the next pass.
// Every decision is a hash of (walk seed, pass, column) and the claims are order-free, so a walk is
// a pure function of its seed whatever order the list is in: the same seed finds the same board.
//
// Build options: -DN=board size, -DHALF=half the Feistel width (2*HALF bits hold N - 1), -DSEGMENT
// (columns a work-item places in the start), -DPLACE_TRIES, -DTRIES, -DNOISE (of 1024).

#define DIAGS (2 * N - 1)
#define NONE 0xFFFFFFFFu

inline uint mix32(uint x) {  // murmur3's finalizer: a bijection of 32-bit words
    x ^= x >> 16; x *= 0x85EBCA6Bu; x ^= x >> 13; x *= 0xC2B2AE35u; x ^= x >> 16;
    return x;
}

inline ulong mix64(ulong z) {  // splitmix64's finalizer
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

inline uint below(ulong r, uint k) { return (uint)(((r >> 32) * (ulong)k) >> 32); }

// Column c's row in walk `key`'s starting permutation: 4 Feistel rounds over 2*HALF bits, applied
// again while the image is >= N (cycle walking keeps it a bijection of [0, N)).
inline uint start_row(ulong key, uint c) {
    uint x = c;
    do {
        uint left = x >> HALF, right = x & ((1u << HALF) - 1);
        for (uint round = 0; round < 4; round++) {
            uint f = (uint)mix64(key + ((ulong)round << 32) + right) & ((1u << HALF) - 1);
            uint t = right;
            right = left ^ f;
            left = t;
        }
        x = (left << HALF) | right;
    } while (x >= N);
    return x;
}

__kernel void queens_shuffle(__global uint *q, const ulong seed) {
    const ulong g = get_global_id(0);
    const uint w = g / N, c = g % N;
    q[g] = start_row(mix64(seed + w), c);
}

// Column c takes a row from board[c..end) (swapped into place) whose two diagonals hold no queen in
// the counts s1, s2, trying up to PLACE_TRIES rows (the last one tried when none is free); its row.
inline uint place_column(__global uint *board, __global const uint *s1, __global const uint *s2, uint c, uint end,
                         ulong *rnd) {
    uint k = c;
    for (int t = 0; t < PLACE_TRIES; t++) {
        *rnd = mix64(*rnd + 0x9E3779B97F4A7C15UL);
        k = c + below(*rnd, end - c);
        const uint r = board[k];
        if (s1[r + c] == 0 && s2[r + N - 1 - c] == 0) break;
    }
    const uint r = board[k];
    board[k] = board[c];
    board[c] = r;
    return r;
}

// Round `round` of the greedy start: each segment of SEGMENT columns places its next column on a row
// from the rest of its own slice of the shuffled permutation (so rows stay a permutation) whose two
// diagonals hold no queen placed in an earlier round, trying up to PLACE_TRIES rows (Sosic and Gu's
// start, segments side by side). Queens placed in the same round do not see each other; queens_count
// adds the round's queens to the counts after it.
#define SEGMENTS ((N + SEGMENT - 1) / SEGMENT)
__kernel void queens_place(__global uint *q, __global const uint *d1, __global const uint *d2, const ulong seed,
                           const uint round) {
    const uint g = get_global_id(0), w = g / SEGMENTS, first = (g % SEGMENTS) * SEGMENT, c = first + round;
    const uint end = min(first + SEGMENT, (uint)N);
    if (c >= end) return;
    __global uint *board = q + (ulong)w * N;
    __global const uint *s1 = d1 + w * DIAGS, *s2 = d2 + w * DIAGS;
    ulong rnd = mix64(mix64(seed + w) ^ mix64(c + 0x5851F42D4C957F2DUL));
    place_column(board, s1, s2, c, end, &rnd);
}

// The whole greedy start of a walk in one work-item (a CPU's start: one segment per walk), each queen
// seeing every queen placed before it, as in a one-core program.
__kernel void queens_place_walk(__global uint *q, __global uint *d1, __global uint *d2, const ulong seed) {
    const uint w = get_global_id(0);
    __global uint *board = q + (ulong)w * N, *s1 = d1 + w * DIAGS, *s2 = d2 + w * DIAGS;
    ulong rnd = mix64(mix64(seed + w) ^ 0x5851F42D4C957F2DUL);
    for (uint c = 0; c < N; c++) {
        const uint r = place_column(board, s1, s2, c, N, &rnd);
        s1[r + c]++;
        s2[r + N - 1 - c]++;
    }
}

__kernel void queens_count(__global const uint *q, __global uint *d1, __global uint *d2, const uint round) {
    const uint g = get_global_id(0), w = g / SEGMENTS, c = (g % SEGMENTS) * SEGMENT + round;
    if (c >= min((g % SEGMENTS) * SEGMENT + SEGMENT, (uint)N)) return;
    const uint r = q[(ulong)w * N + c];
    atomic_inc(&d1[w * DIAGS + r + c]);
    atomic_inc(&d2[w * DIAGS + r + N - 1 - c]);
}

// Attacking pairs a diagonal family gains when counts[a] and counts[b] lose one and counts[x] and
// counts[y] gain one (any of them may coincide).
inline int family_delta(__global const uint *counts, uint a, uint b, uint x, uint y) {
    uint idx[4] = {a, b, x, y};
    int delta = 0;
    for (int k = 0; k < 4; k++) {
        bool seen = false;
        for (int m = 0; m < k; m++) seen |= idx[m] == idx[k];
        if (seen) continue;
        int before = counts[idx[k]];
        int after = before - (idx[k] == a) - (idx[k] == b) + (idx[k] == x) + (idx[k] == y);
        delta += (after * (after - 1) - before * (before - 1)) / 2;
    }
    return delta;
}

inline uint priority(ulong pass, uint c) { return mix32(c ^ (uint)mix64(pass)); }

// The claims of walk w: its N queens, then its two diagonal families.
#define CLAIMS (N + 2 * DIAGS)

// The ten things a swap of columns c and j (rows r and s) claims, as indices into the walk's claims.
inline void swap_claims(uint c, uint j, uint r, uint s, uint *at) {
    at[0] = c; at[1] = j;
    at[2] = N + r + c; at[3] = N + s + j; at[4] = N + s + c; at[5] = N + r + j;
    at[6] = N + DIAGS + r + N - 1 - c; at[7] = N + DIAGS + s + N - 1 - j;
    at[8] = N + DIAGS + s + N - 1 - c; at[9] = N + DIAGS + r + N - 1 - j;
}

inline bool attacked(__global const uint *d1, __global const uint *d2, uint w, uint c, uint r) {
    return d1[w * DIAGS + r + c] > 1 || d2[w * DIAGS + r + N - 1 - c] > 1;
}

// Lists every queen in conflict (in any order: nothing depends on it) and counts them per walk.
__kernel void queens_scan(__global const uint *q, __global const uint *d1, __global const uint *d2,
                          __global uint *todo, __global uint *listed, __global uint *conflicts) {
    const uint g = get_global_id(0), w = g / N, c = g % N;
    if (!attacked(d1, d2, w, c, q[g])) return;
    todo[atomic_inc(listed)] = g;
    atomic_inc(&conflicts[w]);
}

// Per walk, after a scan: none in conflict is solved (at this pass); the count is kept as its best.
__kernel void queens_settle(__global uint *conflicts, __global uint *least, __global ulong *solved_at,
                            const ulong pass) {
    const uint w = get_global_id(0);
    if (conflicts[w] == 0 && solved_at[w] == 0) solved_at[w] = pass + 1;  // +1: 0 means not yet
    least[w] = min(least[w], conflicts[w]);
    conflicts[w] = 0;
}

__kernel void queens_propose(const uint listed, __global const uint *todo, __global const uint *q, __global const uint *d1,
                             __global const uint *d2, __global uint *partner, __global uint *claim,
                             const ulong seed, const ulong pass) {
    if (get_global_id(0) >= listed) return;  // the launch is rounded up to whole work-groups
    const uint g = todo[get_global_id(0)], w = g / N, c = g % N;
    __global const uint *s1 = d1 + w * DIAGS, *s2 = d2 + w * DIAGS;
    __global const uint *board = q + (ulong)w * N;
    const uint r = board[c];
    partner[g] = NONE;
    if (!attacked(d1, d2, w, c, r)) return;
    ulong rnd = mix64(mix64(seed + w) ^ mix64(pass * 0x9E3779B97F4A7C15UL + c));
    int best = 1 << 30;
    uint pick = NONE;
    for (int t = 0; t < TRIES; t++) {
        rnd = mix64(rnd + 0x9E3779B97F4A7C15UL);
        uint j = below(rnd, N - 1);
        j += j >= c;  // any column but c
        const uint s = board[j];
        int delta = family_delta(s1, r + c, s + j, s + c, r + j)
                  + family_delta(s2, r + N - 1 - c, s + N - 1 - j, s + N - 1 - c, r + N - 1 - j);
        if (delta < best) { best = delta; pick = j; }
    }
    rnd = mix64(rnd + 1);
    if (best >= 0 && (uint)(rnd & 1023) >= NOISE) return;
    partner[g] = pick;
    const uint mine = priority(pass, c);
    uint at[10];
    swap_claims(c, pick, r, board[pick], at);
    __global uint *mark = claim + (ulong)w * CLAIMS;
    for (int k = 0; k < 10; k++) atomic_min(&mark[at[k]], mine);
}

__kernel void queens_apply(const uint listed, __global const uint *todo, __global uint *q, __global uint *d1, __global uint *d2,
                           __global const uint *partner, __global const uint *claim, const ulong pass) {
    if (get_global_id(0) >= listed) return;  // the launch is rounded up to whole work-groups
    const uint g = todo[get_global_id(0)], w = g / N, c = g % N;
    const uint j = partner[g];
    if (j == NONE) return;
    const uint mine = priority(pass, c);
    __global const uint *mark = claim + (ulong)w * CLAIMS;
    __global uint *board = q + (ulong)w * N;
    const uint r = board[c], s = board[j];
    uint at[10];
    swap_claims(c, j, r, s, at);
    for (int k = 0; k < 10; k++)
        if (mark[at[k]] != mine) return;  // lost a queen or a diagonal
    __global uint *s1 = d1 + w * DIAGS, *s2 = d2 + w * DIAGS;
    board[c] = s;
    board[j] = r;
    atomic_dec(&s1[r + c]); atomic_dec(&s1[s + j]); atomic_inc(&s1[s + c]); atomic_inc(&s1[r + j]);
    atomic_dec(&s2[r + N - 1 - c]); atomic_dec(&s2[s + N - 1 - j]);
    atomic_inc(&s2[s + N - 1 - c]); atomic_inc(&s2[r + N - 1 - j]);
}

// The same ten entries whether the swap was made or not (swap_claims is symmetric in the two rows).
__kernel void queens_release(const uint listed, __global const uint *todo, __global const uint *q, __global uint *partner,
                             __global uint *claim) {
    if (get_global_id(0) >= listed) return;  // the launch is rounded up to whole work-groups
    const uint g = todo[get_global_id(0)], w = g / N, c = g % N;
    const uint j = partner[g];
    if (j == NONE) return;
    __global const uint *board = q + (ulong)w * N;
    uint at[10];
    swap_claims(c, j, board[c], board[j], at);
    __global uint *mark = claim + (ulong)w * CLAIMS;
    for (int k = 0; k < 10; k++) mark[at[k]] = NONE;
}
