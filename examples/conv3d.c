// 3-D convolution (PolyBench/GPU 3DConvolution family): a 3x3x3 filter on a 256^3
// float volume, with gang / worker / vector on the three parallel loops and the filter
// taps as three sequential inner loops whose indices also appear in the subscripts.
// schedpredict-args:
#define NI 256
#define NJ 256
#define NK 256

void conv3d(const float w[3][3][3], const float *restrict a, float *restrict b)
{
#pragma acc parallel copyin(w[0:3][0:3][0:3], a[0:NI*NJ*NK]) copyout(b[0:NI*NJ*NK])
    {
#pragma acc loop gang
        for (int i = 1; i < NI - 1; i++)
#pragma acc loop worker
            for (int j = 1; j < NJ - 1; j++)
#pragma acc loop vector
                for (int k = 1; k < NK - 1; k++) {
                    float s = 0.0f;
                    for (int di = 0; di < 3; di++)
                        for (int dj = 0; dj < 3; dj++)
                            for (int dk = 0; dk < 3; dk++)
                                s += w[di][dj][dk]
                                   * a[((i + di - 1) * NJ + (j + dj - 1)) * NK + (k + dk - 1)];
                    b[(i * NJ + j) * NK + k] = s;
                }
    }
}
