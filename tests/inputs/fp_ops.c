// Floating-point work in loop bodies (analyzer/arith.c): math calls of both precisions,
// fused forms, compound updates, ternaries, a double constant promoting float arithmetic, and
// scalars carried between statements. A seed of the analyzer's fuzzer (scripts/fuzz.sh).
#include <math.h>
#define N 512
float f[N][N], g[N][N];
double d[N][N], e[N];

void fp_ops(float alpha, double beta)
{
#pragma acc parallel loop
    for (int i = 1; i < N - 1; i++) {
        double acc = 0.0;
        float m = -1.0f;
#pragma acc loop seq
        for (int j = 1; j < N - 1; j++) {
            float t = f[i][j] * alpha + g[i][j - 1];
            t = t > m ? t : m;
            m = fmaxf(m, sqrtf(t * t + 1.0f) / (1.0f + expf(-t)));
            double u = d[i][j] * 0.5 + beta / (d[i][j + 1] + 1.0);
            acc += pow(u, 3.0) - log(fabs(u) + 1.0) * (f[i][j] * 0.5);
            acc -= (j % 2 ? u : -u) * sin(u) * cos(u);
            g[i][j] = (float)(acc / (j + 1)) + t * t;
        }
        e[i] = acc * acc + sqrt(acc * acc + (double)m);
    }
}
