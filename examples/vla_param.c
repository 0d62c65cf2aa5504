// VLA parameters `double a[n][m]` with run-time n, m: column sums (a reduction down each
// column, coalesced across j) followed by an element-wise normalisation; the row
// length m of the VLA type gives the i stride.
// schedpredict-args: --param n=8192 --param m=1024
void column_normalize(int n, int m, double a[n][m], double colsum[m])
{
#pragma acc data copy(a[0:n][0:m]) create(colsum[0:m])
    {
#pragma acc parallel loop gang vector
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            for (int i = 0; i < n; i++)
                s += a[i][j];
            colsum[j] = s;
        }
#pragma acc parallel loop collapse(2)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++)
                a[i][j] /= colsum[j];
    }
}
