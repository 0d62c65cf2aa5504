// PolyBench gemm: C = alpha*A*B + beta*C. Arrays have compile-time extents but the
// loops run to the run-time sizes ni, nj, nk (PolyBench style), so the analyzer needs
// --param for the bounds; B is read down a column in the sequential k loop.
// schedpredict-args: --param ni=2000 --param nj=2300 --param nk=2600
#define NI 2000
#define NJ 2300
#define NK 2600

void kernel_gemm(int ni, int nj, int nk, double alpha, double beta,
                 double C[NI][NJ], double A[NI][NK], double B[NK][NJ])
{
#pragma acc parallel loop copyin(A[0:ni][0:nk], B[0:nk][0:nj]) copy(C[0:ni][0:nj])
    for (int i = 0; i < ni; i++) {
#pragma acc loop
        for (int j = 0; j < nj; j++) {
            double acc = C[i][j] * beta;
            for (int k = 0; k < nk; k++)
                acc += alpha * A[i][k] * B[k][j];
            C[i][j] = acc;
        }
    }
}
