// A transpose in a kernels region: b[j][i] against itself for i < i' looks, as a linear offset
// (8N*j + 8*i), as if it could meet at another j; as subscripts it cannot.
#define N 4096
static double a[N][N], b[N][N];
void transpose(void)
{
#pragma acc kernels
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            b[j][i] = a[i][j];
}

// Symmetric writes over the upper triangle: cov[i][j] and cov[j][i] meet across i only if the
// first subscripts (i > i') and the second (i < i') do under the same direction: never.
#define M 512
static double cov[M][M], d[M][M];
void symmetric(void)
{
#pragma acc kernels
    for (int i = 0; i < M; i++)
        for (int j = i; j < M; j++) {
            cov[i][j] = d[i][j] * 2.0;
            cov[j][i] = cov[i][j];
        }
}
