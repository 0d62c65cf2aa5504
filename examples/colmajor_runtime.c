// Column-major (Fortran-order) m x n matrices, a[i + j*m], on pointer parameters with
// run-time sizes. gemv_cm keeps i (contiguous) on the vector lanes; scale_rows_cm is the
// naive port with the loops in C order, where the vector loop j strides by m doubles.
// schedpredict-args: --param m=8192 --param n=2048
void gemv_cm(int m, int n, const double *restrict a, const double *restrict x,
             double *restrict y)
{
#pragma acc parallel loop present(a[0:m*n], x[0:n], y[0:m])
    for (int i = 0; i < m; i++) {
        double s = 0.0;
#pragma acc loop seq
        for (int j = 0; j < n; j++)
            s += a[i + j * m] * x[j];
        y[i] = s;
    }
}

void scale_rows_cm(int m, int n, const double *restrict d, double *restrict a)
{
#pragma acc parallel loop gang present(a[0:m*n], d[0:m])
    for (int i = 0; i < m; i++) {
#pragma acc loop vector
        for (int j = 0; j < n; j++)
            a[i + j * m] *= d[i];
    }
}
