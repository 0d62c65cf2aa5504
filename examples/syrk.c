// PolyBench syrk: C = alpha*A*A^T + beta*C on the lower triangle (j <= i). Triangular
// parallel nest: half the threads of the launch grid idle unless the schedule packs j;
// A is read along row i and row j in the sequential k loop.
// schedpredict-args:
#define N 1200
#define M 1000

void kernel_syrk(double alpha, double beta, double C[N][N], const double A[N][M])
{
#pragma acc parallel loop copy(C[0:N][0:N]) copyin(A[0:N][0:M])
    for (int i = 0; i < N; i++) {
#pragma acc loop
        for (int j = 0; j <= i; j++) {
            double s = C[i][j] * beta;
            for (int k = 0; k < M; k++)
                s += alpha * A[i][k] * A[j][k];
            C[i][j] = s;
        }
    }
}
