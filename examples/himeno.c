// Himeno (EPCC OpenACC suite, dissertation 7.4): one Jacobi sweep of the 19-point
// pressure Poisson stencil on 256^3 floats, 14 arrays (coefficients a0..a3, b0..b2,
// c0..c2 as the leading index of 4-D arrays), with a sum reduction on gosa.
// schedpredict-args:
#define MI 256
#define MJ 256
#define MK 256

float himeno_sweep(float omega,
                   float a[4][MI][MJ][MK], float b[3][MI][MJ][MK], float c[3][MI][MJ][MK],
                   float p[MI][MJ][MK], float bnd[MI][MJ][MK],
                   float wrk1[MI][MJ][MK], float wrk2[MI][MJ][MK])
{
    float gosa = 0.0f;
#pragma acc parallel loop gang reduction(+:gosa) \
        present(a[0:4][0:MI][0:MJ][0:MK], b[0:3][0:MI][0:MJ][0:MK], c[0:3][0:MI][0:MJ][0:MK], \
                p[0:MI][0:MJ][0:MK], bnd[0:MI][0:MJ][0:MK], wrk1[0:MI][0:MJ][0:MK], wrk2[0:MI][0:MJ][0:MK])
    for (int i = 1; i < MI - 1; i++) {
#pragma acc loop worker reduction(+:gosa)
        for (int j = 1; j < MJ - 1; j++) {
#pragma acc loop vector reduction(+:gosa)
            for (int k = 1; k < MK - 1; k++) {
                float s0 = a[0][i][j][k] * p[i + 1][j][k]
                         + a[1][i][j][k] * p[i][j + 1][k]
                         + a[2][i][j][k] * p[i][j][k + 1]
                         + b[0][i][j][k] * (p[i + 1][j + 1][k] - p[i + 1][j - 1][k]
                                          - p[i - 1][j + 1][k] + p[i - 1][j - 1][k])
                         + b[1][i][j][k] * (p[i][j + 1][k + 1] - p[i][j - 1][k + 1]
                                          - p[i][j + 1][k - 1] + p[i][j - 1][k - 1])
                         + b[2][i][j][k] * (p[i + 1][j][k + 1] - p[i - 1][j][k + 1]
                                          - p[i + 1][j][k - 1] + p[i - 1][j][k - 1])
                         + c[0][i][j][k] * p[i - 1][j][k]
                         + c[1][i][j][k] * p[i][j - 1][k]
                         + c[2][i][j][k] * p[i][j][k - 1]
                         + wrk1[i][j][k];
                float ss = (s0 * a[3][i][j][k] - p[i][j][k]) * bnd[i][j][k];
                gosa += ss * ss;
                wrk2[i][j][k] = p[i][j][k] + omega * ss;
            }
        }
    }
    return gosa;
}
