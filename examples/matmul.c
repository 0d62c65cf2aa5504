// Matrix multiplication (kernelGen suite, dissertation 7.4): xy-reuse. A's row i is
// shared by the threads along j (x), B's column j by the threads along i (y); the
// sequential k loop walks A along a row and B down a column.
// schedpredict-args:
#define N 4096

void matmul(const double a[N][N], const double b[N][N], double c[N][N])
{
    int i, j, k;
    double sum;

#pragma acc parallel loop collapse(2) private(k, sum) \
    present(a[0:N][0:N], b[0:N][0:N], c[0:N][0:N])
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++) {
            sum = 0.0;
            for (k = 0; k < N; k++)
                sum += a[i][k] * b[k][j];
            c[i][j] = sum;
        }
    }
}
