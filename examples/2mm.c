// PolyBench 2mm: D = alpha*A*B*C + beta*D as two matrix products in one data region.
// Two nests with different shapes (NI x NJ, then NI x NL) and sequential inner
// reductions over NK and NJ; tmp is produced by the first nest and read by the second.
// schedpredict-args:
#define NI 800
#define NJ 900
#define NK 1100
#define NL 1200

static double A[NI][NK], B[NK][NJ], C[NJ][NL], D[NI][NL], tmp[NI][NJ];

void kernel_2mm(double alpha, double beta)
{
#pragma acc data copyin(A, B, C) copy(D) create(tmp)
    {
#pragma acc parallel loop gang
        for (int i = 0; i < NI; i++)
#pragma acc loop vector
            for (int j = 0; j < NJ; j++) {
                double s = 0.0;
                for (int k = 0; k < NK; k++)
                    s += alpha * A[i][k] * B[k][j];
                tmp[i][j] = s;
            }
#pragma acc parallel loop gang
        for (int i = 0; i < NI; i++)
#pragma acc loop vector
            for (int j = 0; j < NL; j++) {
                double s = D[i][j] * beta;
                for (int k = 0; k < NJ; k++)
                    s += tmp[i][k] * C[k][j];
                D[i][j] = s;
            }
    }
}
