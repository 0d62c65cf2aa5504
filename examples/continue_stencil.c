// The 5-point smoothing of guarded_stencil.c written with an early continue on the edges,
// as GPU code often skips its boundary: the statements after `if (...) continue;` run where
// its condition does not hold, so the analyzer guards them with i != 0, i != N-1, j != 0 and
// j != N-1 (and their neighbours stay inside the array).
// schedpredict-args:
#define N 4096

void smooth_interior(const double a[N][N], double b[N][N])
{
#pragma acc parallel loop present(a[0:N][0:N], b[0:N][0:N])
    for (int i = 0; i < N; i++) {
#pragma acc loop
        for (int j = 0; j < N; j++) {
            if (i == 0 || i == N - 1 || j == 0 || j == N - 1)
                continue;
            b[i][j] = 0.5 * a[i][j] + 0.125 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
        }
    }
}
