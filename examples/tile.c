// tile(32,4): the nest is cut into 32 x 4 tiles (32 along the inner j loop, 4 along i).
// c[i][j] = a[i][j] + b[j][i] reads b transposed, so the tile shape decides how many
// of b's lines stay in cache between neighbouring tile rows.
// schedpredict-args:
#define N 4096

static double a[N][N], b[N][N], c[N][N];

void add_transposed(void)
{
#pragma acc parallel loop tile(32, 4) copyin(a, b) copyout(c)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            c[i][j] = a[i][j] + b[j][i];
}
