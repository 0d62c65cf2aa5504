// PolyBench/GPU 2DConvolution: a 3x3 filter over a 4096x4096 float image. Nine reads
// from three rows; neighbouring threads along j share eight of their nine points, and
// float elements put 32 lanes in one 128-byte line.
// schedpredict-args:
#define NI 4096
#define NJ 4096

static float A[NI][NJ], B[NI][NJ];

void conv2d(void)
{
    const float c11 = 0.2f, c12 = -0.3f, c13 = 0.4f;
    const float c21 = 0.5f, c22 = 0.6f, c23 = 0.7f;
    const float c31 = -0.8f, c32 = -0.9f, c33 = 0.1f;

#pragma acc parallel loop collapse(2) copyin(A) copyout(B)
    for (int i = 1; i < NI - 1; i++)
        for (int j = 1; j < NJ - 1; j++)
            B[i][j] = c11 * A[i - 1][j - 1] + c12 * A[i][j - 1] + c13 * A[i + 1][j - 1]
                    + c21 * A[i - 1][j]     + c22 * A[i][j]     + c23 * A[i + 1][j]
                    + c31 * A[i - 1][j + 1] + c32 * A[i][j + 1] + c33 * A[i + 1][j + 1];
}
