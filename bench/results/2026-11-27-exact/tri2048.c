#define N 2048
void tri(const double a[N][N], double b[N][N])
{
#pragma acc parallel loop present(a[0:N][0:N], b[0:N][0:N])
    for (int i = 0; i < N; i++) {
#pragma acc loop
        for (int j = 0; j < N; j++)
            if (j <= i)
                b[i][j] = 2.0 * a[i][j];
    }
}
