// PolyBench fdtd-2d: one time step of the 2-D Yee scheme, four nests in a data region
// (source row, ey update, ex update, hz update). Each field is read at its own point and
// a neighbour one row (i-1, i+1) or one column (j-1, j+1) away: a mix of x and y reuse.
// schedpredict-args:
#define NX 2000
#define NY 2600

static double ex[NX][NY], ey[NX][NY], hz[NX][NY];

void fdtd2d_step(double src)
{
#pragma acc data present(ex, ey, hz)
    {
#pragma acc parallel loop
        for (int j = 0; j < NY; j++)
            ey[0][j] = src;
#pragma acc parallel loop collapse(2)
        for (int i = 1; i < NX; i++)
            for (int j = 0; j < NY; j++)
                ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
#pragma acc parallel loop collapse(2)
        for (int i = 0; i < NX; i++)
            for (int j = 1; j < NY; j++)
                ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
#pragma acc parallel loop collapse(2)
        for (int i = 0; i < NX - 1; i++)
            for (int j = 0; j < NY - 1; j++)
                hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
    }
}
