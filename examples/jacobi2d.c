// PolyBench jacobi-2d: TSTEPS pairs of 5-point sweeps A -> B -> A; the time loop runs on
// the host around a data region, so the analyzer sees two stencil nests. The vector loop
// is the contiguous j loop with vector_length(256).
// schedpredict-args:
#define N 4096
#define TSTEPS 100

void kernel_jacobi_2d(double A[N][N], double B[N][N])
{
#pragma acc data copy(A[0:N][0:N]) create(B[0:N][0:N])
    for (int t = 0; t < TSTEPS; t++) {
#pragma acc parallel loop gang vector_length(256)
        for (int i = 1; i < N - 1; i++)
#pragma acc loop vector
            for (int j = 1; j < N - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
#pragma acc parallel loop gang vector_length(256)
        for (int i = 1; i < N - 1; i++)
#pragma acc loop vector
            for (int j = 1; j < N - 1; j++)
                A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
    }
}
