// A stencil written GPU-style over the whole grid with an affine guard on the indices
// (if (i > 0 && i < N-1 && j > 0 && j < N-1)) instead of trimmed bounds: boundary lanes
// take the copy branch, so each warp executes both paths on the edge rows and columns.
// schedpredict-args:
#define N 4096

void smooth_guarded(const double a[N][N], double b[N][N])
{
#pragma acc parallel loop present(a[0:N][0:N], b[0:N][0:N])
    for (int i = 0; i < N; i++) {
#pragma acc loop
        for (int j = 0; j < N; j++) {
            if (i > 0 && i < N - 1 && j > 0 && j < N - 1)
                b[i][j] = 0.5 * a[i][j]
                        + 0.125 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
            else
                b[i][j] = a[i][j];
        }
    }
}
