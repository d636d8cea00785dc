#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* SABRE Algorithm 1: greedy intra-node balancing with splitting against the
 * tolerance L_max (see src/sabre.h for the contract). */

#include "sabre.h"

uint64_t skewshim_sabre_lmax(uint64_t total, int nlanes, double alpha)
{
    if (nlanes < 1)
        nlanes = 1;
    if (!(alpha >= 1.0))        /* also catches NaN */
        alpha = 1.0;
    uint64_t n = (uint64_t)nlanes;
    uint64_t base = total / n + (total % n != 0);
    /* The slack is a product of one double with one integer, rounded down:
     * the same bits on every rank, and never below the ceiling of the mean,
     * so the lanes together always hold the whole subproblem. */
    double extra = (alpha - 1.0) * (double)base;
    if (extra >= 18446744073709551615.0 - (double)base)
        return UINT64_MAX;
    return base + (uint64_t)extra;
}

/* "a goes before b": larger first, then lower index, so the order is total
 * and no two ranks can sort differently. */
static int before(const uint64_t *bytes, int a, int b)
{
    if (bytes[a] != bytes[b])
        return bytes[a] > bytes[b];
    return a < b;
}

/* Heapsort needs no allocation and no qsort context pointer; the order is
 * total, so instability does not matter.  The fallback of sort_items. */
static void sift_down(const uint64_t *bytes, int *ord, int root, int n)
{
    for (;;) {
        int child = 2 * root + 1;
        if (child >= n)
            return;
        /* max-heap on "after": the element that sorts last rises to the top */
        if (child + 1 < n && before(bytes, ord[child], ord[child + 1]))
            child++;
        if (!before(bytes, ord[root], ord[child]))
            return;
        int t = ord[root];
        ord[root] = ord[child];
        ord[child] = t;
        root = child;
    }
}

static void heap_sort(const uint64_t *bytes, int *ord, int n)
{
    for (int i = n / 2 - 1; i >= 0; i--)
        sift_down(bytes, ord, i, n);
    for (int end = n - 1; end > 0; end--) {
        int t = ord[0];
        ord[0] = ord[end];
        ord[end] = t;
        sift_down(bytes, ord, 0, end);
    }
}

/* The order is total (no two items compare equal), so every correct sort
 * yields the same permutation: the algorithm is free to choose, and the
 * planner calls this once per node pair, so speed matters.  Quicksort with
 * insertion sort for short runs, falling back to heapsort when it recurses
 * too deep, so the worst case stays n log n. */
static void insertion_sort(const uint64_t *bytes, int *ord, int n)
{
    for (int i = 1; i < n; i++) {
        int x = ord[i], j = i;
        uint64_t bx = bytes[x];
        while (j > 0 && (bytes[ord[j - 1]] < bx || (bytes[ord[j - 1]] == bx && ord[j - 1] > x))) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
}

static void quick_sort(const uint64_t *bytes, int *ord, int n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(bytes, ord, n);
            return;
        }
        /* Median of three to the front as the pivot. */
        int mid = n / 2, last = n - 1, t;
        if (before(bytes, ord[mid], ord[0])) { t = ord[mid]; ord[mid] = ord[0]; ord[0] = t; }
        if (before(bytes, ord[last], ord[0])) { t = ord[last]; ord[last] = ord[0]; ord[0] = t; }
        if (before(bytes, ord[last], ord[mid])) { t = ord[last]; ord[last] = ord[mid]; ord[mid] = t; }
        t = ord[mid]; ord[mid] = ord[0]; ord[0] = t;
        int pv = ord[0], i = 0, j = n;
        for (;;) {
            do i++; while (i < n && before(bytes, ord[i], pv));
            do j--; while (before(bytes, pv, ord[j]));
            if (i >= j)
                break;
            t = ord[i]; ord[i] = ord[j]; ord[j] = t;
        }
        ord[0] = ord[j];
        ord[j] = pv;
        /* Recurse into the smaller side, loop on the larger. */
        if (j < n - 1 - j) {
            quick_sort(bytes, ord, j, depth);
            ord += j + 1;
            n -= j + 1;
        } else {
            quick_sort(bytes, ord + j + 1, n - j - 1, depth);
            n = j;
        }
    }
    insertion_sort(bytes, ord, n);
}

static void sort_items(const uint64_t *bytes, int *ord, int n)
{
    int depth = 0;
    for (int k = n; k > 1; k >>= 1)
        depth += 2;
    quick_sort(bytes, ord, n, depth);
}

static int least_loaded(const uint64_t *load, int nlanes)
{
    int best = 0;
    for (int l = 1; l < nlanes; l++)
        if (load[l] < load[best])
            best = l;
    return best;
}

int skewshim_sabre_balance(const uint64_t *bytes, const int *pref, int nitems,
                           int nlanes, double alpha, int *order,
                           skewshim_sabre_piece *out, size_t *npieces,
                           uint64_t *lane_load)
{
    if (nitems < 0 || nlanes < 1 || !npieces || !lane_load ||
        (nitems > 0 && (!bytes || !pref || !order || !out)))
        return -1;
    uint64_t total = 0;
    int n = 0;
    for (int i = 0; i < nitems; i++) {
        if (pref[i] < -1 || pref[i] >= nlanes)
            return -1;
        if (bytes[i] == 0)
            continue;
        total += bytes[i];
        order[n++] = i;
    }
    for (int l = 0; l < nlanes; l++)
        lane_load[l] = 0;
    *npieces = 0;
    if (n == 0)
        return 0;
    sort_items(bytes, order, n);

    uint64_t lmax = skewshim_sabre_lmax(total, nlanes, alpha);
    size_t np = 0;
    int next = 0;
    /* The queue front is the remainder of a split block, when there is one:
     * Algorithm 1 line 17 pushes it back to the front. */
    int cur = -1;
    uint64_t cur_off = 0;
    while (cur >= 0 || next < n) {
        if (cur < 0) {
            cur = order[next++];
            cur_off = 0;
        }
        uint64_t left = bytes[cur] - cur_off;
        int p = pref[cur];
        int target;
        if (p >= 0 && lane_load[p] + left <= lmax)
            target = p;
        else
            target = least_loaded(lane_load, nlanes);
        uint64_t room = lmax - lane_load[target];
        /* room > 0 always: the lanes hold nlanes * lmax >= total bytes, so
         * while bytes remain the least loaded lane is below lmax. */
        uint64_t take = left <= room ? left : room;
        out[np].item = cur;
        out[np].lane = target;
        out[np].off = cur_off;
        out[np].bytes = take;
        np++;
        lane_load[target] += take;
        cur_off += take;
        if (cur_off == bytes[cur])
            cur = -1;
    }
    *npieces = np;
    return 0;
}
