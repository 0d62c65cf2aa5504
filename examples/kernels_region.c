// A `kernels` region with two nests and no loop clauses at all: the compiler (and the
// analyzer) must find both nests and choose every mapping. Central-difference gradient:
// gx reads along rows (x reuse), gy reads the rows above and below (y reuse).
// schedpredict-args:
#define N 4096

static double u[N][N], gx[N][N], gy[N][N];

void gradient(double inv2h)
{
#pragma acc kernels copyin(u) copyout(gx, gy)
    {
        for (int i = 0; i < N; i++)
            for (int j = 1; j < N - 1; j++)
                gx[i][j] = (u[i][j + 1] - u[i][j - 1]) * inv2h;

        for (int i = 1; i < N - 1; i++)
            for (int j = 0; j < N; j++)
                gy[i][j] = (u[i + 1][j] - u[i - 1][j]) * inv2h;
    }
}
