// PolyBench bicg: s = A^T r and q = A p, written as two nests so that each has a
// parallel output index: the s nest reads A down columns (coalesced across j), the
// q nest reads A along rows (coalesced only if the reduction loop gets the vector lanes).
// schedpredict-args:
#define M 1900
#define N 2100

static double A[N][M], r[N], p[M], s[M], q[N];

void kernel_bicg(void)
{
#pragma acc parallel loop copyin(A, r) copyout(s)
    for (int j = 0; j < M; j++) {
        double acc = 0.0;
        for (int i = 0; i < N; i++)
            acc += r[i] * A[i][j];
        s[j] = acc;
    }

#pragma acc parallel loop gang vector_length(128) copyin(A, p) copyout(q)
    for (int i = 0; i < N; i++) {
        double acc = 0.0;
#pragma acc loop vector reduction(+:acc)
        for (int j = 0; j < M; j++)
            acc += A[i][j] * p[j];
        q[i] = acc;
    }
}
