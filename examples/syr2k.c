// PolyBench syr2k: C = alpha*(A*B^T + B*A^T) + beta*C on the lower triangle. Four
// row-wise reads per k step (A and B at rows i and j); the triangular inner bound
// j <= i is affine in the outer index.
// schedpredict-args:
#define N 1200
#define M 1000

static double A[N][M], B[N][M], C[N][N];

void kernel_syr2k(double alpha, double beta)
{
#pragma acc parallel loop gang copyin(A, B) copy(C)
    for (int i = 0; i < N; i++) {
#pragma acc loop vector
        for (int j = 0; j <= i; j++) {
            double s = 0.0;
#pragma acc loop seq
            for (int k = 0; k < M; k++)
                s += A[j][k] * B[i][k] + B[j][k] * A[i][k];
            C[i][j] = beta * C[i][j] + alpha * s;
        }
    }
}
