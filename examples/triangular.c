// Triangular nests on a 4096x4096 matrix: the inner bound depends on the outer index.
// tril_scale (j <= i) scales the lower triangle; symmetrize (j < i) copies it to the
// upper triangle, a transposed, row-strided store, much as in a transpose.
// schedpredict-args:
#define N 4096

static double a[N][N], d[N];

void tril_scale(void)
{
#pragma acc parallel loop copy(a) copyin(d)
    for (int i = 0; i < N; i++)
#pragma acc loop vector
        for (int j = 0; j <= i; j++)
            a[i][j] *= d[i] * d[j];
}

void symmetrize(void)
{
#pragma acc parallel loop gang present(a)
    for (int i = 1; i < N; i++) {
#pragma acc loop vector
        for (int j = 0; j < i; j++)
            a[j][i] = a[i][j];
    }
}
