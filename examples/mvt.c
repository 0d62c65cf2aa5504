// PolyBench mvt: x_1 += A y_1 and x_2 += A^T y_2 on one 4000x4000 matrix. The same
// i-outer/j-inner shape reads A[i][j] in the first nest and A[j][i] in the second,
// so the best mapping of i and j differs between the two nests.
// schedpredict-args:
#define N 4000

static double A[N][N], x_1[N], x_2[N], y_1[N], y_2[N];

void kernel_mvt(void)
{
#pragma acc data copyin(A, y_1, y_2) copy(x_1, x_2)
    {
#pragma acc parallel loop independent
        for (int i = 0; i < N; i++) {
            double s = x_1[i];
#pragma acc loop reduction(+:s)
            for (int j = 0; j < N; j++)
                s += A[i][j] * y_1[j];
            x_1[i] = s;
        }
#pragma acc parallel loop independent
        for (int i = 0; i < N; i++) {
            double s = x_2[i];
#pragma acc loop reduction(+:s)
            for (int j = 0; j < N; j++)
                s += A[j][i] * y_2[j];
            x_2[i] = s;
        }
    }
}
