// An indirect gather: x's size comes from the data clause of gather_sized, and from nowhere in
// gather_unsized (the analyzer warns there). tests/cli_errors.sh.
void gather_sized(int n, const int *restrict col, const double *restrict x, double *restrict y)
{
#pragma acc parallel loop present(col[0:n], x[0:n / 2 + 1000], y[0:n])
    for (int i = 0; i < n; i++)
        y[i] = x[col[i]];
}

void gather_unsized(int n, const int *restrict col, const double *restrict x, double *restrict y)
{
#pragma acc parallel loop
    for (int i = 0; i < n; i++)
        y[i] = 2.0 * x[col[i]];
}
