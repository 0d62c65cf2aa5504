// LU's rank-1 update in a kernels region: i and j start at k + 1, so the hull of the indices
// overlaps rows i and k; in the loops' trip counters they cannot meet for equal k.
#define N 1024
static double A[N][N];
void lu_update(void)
{
#pragma acc kernels copy(A)
    for (int k = 0; k < N - 1; k++)
        for (int i = k + 1; i < N; i++)
            for (int j = k + 1; j < N; j++)
                A[i][j] -= A[i][k] * A[k][j];
}
