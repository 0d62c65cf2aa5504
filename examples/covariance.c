// PolyBench covariance: column means, centring, then the upper triangle of
// cov = data^T data / (n-1). The mean nest reduces down columns (coalesced across j);
// the covariance nest reads two columns per k step and mirrors into cov[j][i].
// schedpredict-args:
#define M 1200
#define N 1400

static double data[N][M], cov[M][M], mean[M];

void kernel_covariance(double float_n)
{
#pragma acc data copy(data) copyout(cov) create(mean)
    {
#pragma acc parallel loop
        for (int j = 0; j < M; j++) {
            double s = 0.0;
            for (int i = 0; i < N; i++)
                s += data[i][j];
            mean[j] = s / float_n;
        }
#pragma acc parallel loop collapse(2)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                data[i][j] -= mean[j];
#pragma acc parallel loop
        for (int i = 0; i < M; i++) {
#pragma acc loop
            for (int j = i; j < M; j++) {
                double s = 0.0;
                for (int k = 0; k < N; k++)
                    s += data[k][i] * data[k][j];
                cov[i][j] = s / (float_n - 1.0);
                cov[j][i] = cov[i][j];
            }
        }
    }
}
