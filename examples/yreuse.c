// y-reuse (dissertation 7.4, synthetic): b[j][i] accumulates a weighted window down
// column i of a, so threads along the outer y loop (j) share data from one column.
// Every access is coalesced along i, but the shared elements are a row (32 KiB) apart:
// the reuse is caught only when several j rows run in the same block (schedule 2_3).
// schedpredict-args:
#define N 4096
#define R 8

static double a[N + R][N];
static double b[N][N];
static double w[R];

void yreuse(void)
{
#pragma acc parallel loop gang copyin(a, w) copy(b)
    for (int j = 0; j < N; j++) {
#pragma acc loop vector
        for (int i = 0; i < N; i++) {
            double s = 0.0;
#pragma acc loop seq
            for (int k = 0; k < R; k++)
                s += w[k] * a[j + k][i];
            b[j][i] += s;
        }
    }
}
