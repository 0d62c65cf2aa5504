// Matrix transpose (CUDA SDK, dissertation 7.4): B[j][i] = A[i][j] on 4096x4096 doubles.
// Whichever loop gets the vector lanes, one side is strided by a whole row: the schedule
// choice trades coalesced loads against coalesced stores.
// schedpredict-args:
#define N 4096

void transpose(const double a[N][N], double b[N][N])
{
    int i, j;

#pragma acc parallel loop collapse(2) copyin(a[0:N][0:N]) copyout(b[0:N][0:N])
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++)
            b[j][i] = a[i][j];
    }
}
