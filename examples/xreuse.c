// x-reuse (dissertation 7.4, synthetic): b[j][i] accumulates a weighted window of row j
// of a, so threads that are neighbours along the inner x loop (i) share most of their
// a[j][*] reads, and all shared data lie in one contiguous row: high L1 hit rate
// under every schedule, coalesced along i.
// schedpredict-args:
#define N 4096
#define R 8

static double a[N][N + R];
static double b[N][N];
static double w[R];

void xreuse(void)
{
#pragma acc parallel loop copyin(a, w) copy(b)
    for (int j = 0; j < N; j++) {
#pragma acc loop
        for (int i = 0; i < N; i++) {
            double s = 0.0;
            for (int k = 0; k < R; k++)
                s += w[k] * a[j][i + k];
            b[j][i] += s;
        }
    }
}
