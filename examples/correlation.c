// PolyBench correlation: column mean and standard deviation (sqrt), normalisation, then
// the strict upper triangle of corr = data^T data. Four nests: two column reductions,
// one element-wise 2-D nest, one triangular nest with a sequential k reduction.
// schedpredict-args:
#include <math.h>

#define M 1200
#define N 1400

void kernel_correlation(double float_n, double data[N][M], double corr[M][M],
                        double mean[M], double stddev[M])
{
    const double eps = 0.1;
#pragma acc data copy(data[0:N][0:M]) copyout(corr[0:M][0:M]) create(mean[0:M], stddev[0:M])
    {
#pragma acc parallel loop gang vector vector_length(128)
        for (int j = 0; j < M; j++) {
            double s = 0.0;
            for (int i = 0; i < N; i++)
                s += data[i][j];
            mean[j] = s / float_n;
        }
#pragma acc parallel loop gang vector vector_length(128)
        for (int j = 0; j < M; j++) {
            double s = 0.0;
            for (int i = 0; i < N; i++)
                s += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
            s = sqrt(s / float_n);
            stddev[j] = s <= eps ? 1.0 : s;
        }
#pragma acc parallel loop collapse(2)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                data[i][j] = (data[i][j] - mean[j]) / (sqrt(float_n) * stddev[j]);
#pragma acc parallel loop
        for (int i = 0; i < M - 1; i++) {
#pragma acc loop
            for (int j = i + 1; j < M; j++) {
                double s = 0.0;
                for (int k = 0; k < N; k++)
                    s += data[k][i] * data[k][j];
                corr[i][j] = s;
                corr[j][i] = s;
            }
        }
    }
}
