// CSR sparse matrix-vector product with short rows (27 nonzeros: a 27-point operator on
// 128^3), as in the OpenACC tutorial: vector(32) on the row loop, not the default 128.
// x[cols[j]] is indirect and the inner bounds come from row_ptr: the analyzer must name
// both. spmv_ell27 has fixed-length rows, so only x is indirect.
// schedpredict-args: --param nrows=2097152 --param nnz=56623104
#define ROW_NNZ 27

void spmv_csr(int nrows, int nnz, const int *restrict row_ptr,
              const int *restrict cols, const double *restrict vals,
              const double *restrict x, double *restrict y)
{
#pragma acc kernels copyin(row_ptr[0:nrows+1], cols[0:nnz], vals[0:nnz], x[0:nrows]) copyout(y[0:nrows])
    {
#pragma acc loop gang independent
        for (int i = 0; i < nrows; i++) {
            double sum = 0.0;
            int row_start = row_ptr[i];
            int row_end = row_ptr[i + 1];
#pragma acc loop vector(32) reduction(+:sum)
            for (int j = row_start; j < row_end; j++)
                sum += vals[j] * x[cols[j]];
            y[i] = sum;
        }
    }
}

void spmv_ell27(int nrows, const int *restrict cols,
                const double *restrict vals, const double *restrict x, double *restrict y)
{
#pragma acc parallel loop gang vector_length(32) \
    present(cols[0:nrows*ROW_NNZ], vals[0:nrows*ROW_NNZ], x[0:nrows], y[0:nrows])
    for (int i = 0; i < nrows; i++) {
        double sum = 0.0;
#pragma acc loop vector reduction(+:sum)
        for (int j = 0; j < ROW_NNZ; j++)
            sum += vals[i * ROW_NNZ + j] * x[cols[i * ROW_NNZ + j]];
        y[i] = sum;
    }
}
