// Bench kernel for sampling error: 2mm.c:17's shape at 1024 x 446 x 192 doubles (the nest of
// tests/test_speed.c's test_sampling_last_wave). Run with `--compiler nvc`, whose default
// is i gang, j vector(128): j runs in four passes of 128 lanes, the last of 62.
#define NI 1024
#define NJ 446
#define NK 192
static double A[NI][NK], B[NK][NJ], C[NI][NJ];
void f(void)
{
#pragma acc parallel loop gang
    for (int i = 0; i < NI; i++)
#pragma acc loop vector
        for (int j = 0; j < NJ; j++) {
            double s = 0;
            for (int k = 0; k < NK; k++)
                s += A[i][k] * B[k][j];
            C[i][j] = s;
        }
}
