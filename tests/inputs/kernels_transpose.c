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
