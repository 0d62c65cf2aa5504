// PolyBench heat-3d: explicit 3-D heat equation, 7-point stencil A -> B -> A per step.
// The grid edge N comes from -D (PolyBench's dataset macros; the default is the LARGE
// size 120, the analyzer is asked for 256). collapse(3) hands all three loops to one mapping.
// schedpredict-args: -- -DN=256
#ifndef N
#define N 120
#endif

static double A[N][N][N], B[N][N][N];

void kernel_heat_3d(int tsteps)
{
#pragma acc data copy(A) create(B)
    for (int t = 0; t < tsteps; t++) {
#pragma acc parallel loop collapse(3)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                for (int k = 1; k < N - 1; k++)
                    B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                               + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                               + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                               + A[i][j][k];
#pragma acc parallel loop collapse(3)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                for (int k = 1; k < N - 1; k++)
                    A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                               + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                               + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                               + B[i][j][k];
    }
}
