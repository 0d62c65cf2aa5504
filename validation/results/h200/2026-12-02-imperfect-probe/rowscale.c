#define N 4096
static double x[N*N], y[N*N], s[N];
void rowscale(void)
{
#pragma acc parallel loop gang copyin(y, s) copy(x)
    for (int i = 0; i < N; i++) {
        double si = s[i];
#pragma acc loop vector
        for (int j = 0; j < N; j++)
            x[i*N+j] += si*y[i*N+j];
    }
}
void rowscale_perfect(void)
{
#pragma acc parallel loop gang copyin(y, s) copy(x)
    for (int i = 0; i < N; i++) {
#pragma acc loop vector
        for (int j = 0; j < N; j++)
            x[i*N+j] += s[i]*y[i*N+j];
    }
}
