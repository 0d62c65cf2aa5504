// Red-black Gauss-Seidel sweep of a 2-D Poisson problem: each call updates the points of one
// color, (i + j) % 2 == color, from their four neighbours of the other color, so the loops are
// parallel although they read and write u. Each warp runs half its lanes, and every sector it
// touches is read and written in part.
// schedpredict-args:
#define N 4096

void redblack_sweep(double u[N][N], const double f[N][N], int color, double h2)
{
#pragma acc parallel loop present(u[0:N][0:N], f[0:N][0:N])
    for (int i = 1; i < N - 1; i++) {
#pragma acc loop
        for (int j = 1; j < N - 1; j++) {
            if ((i + j) % 2 == color)
                u[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - h2 * f[i][j]);
        }
    }
}
