// Negative-step loops. Back substitution of a batch of tridiagonal systems (Thomas
// algorithm): parallel over systems s, sequential i from nlen-2 down to 0; and a 180-degree
// rotation whose two parallel loops both count down. Sizes are non-const globals.
// schedpredict-args: --param nsys=65536 --param nlen=256
int nsys, nlen;

void thomas_backward(const double *restrict cp, const double *restrict dp, double *restrict x)
{
#pragma acc parallel loop present(cp[0:nlen*nsys], dp[0:nlen*nsys], x[0:nlen*nsys])
    for (int s = 0; s < nsys; s++) {
        x[(nlen - 1) * nsys + s] = dp[(nlen - 1) * nsys + s];
        for (int i = nlen - 2; i >= 0; i--)
            x[i * nsys + s] = dp[i * nsys + s] - cp[i * nsys + s] * x[(i + 1) * nsys + s];
    }
}

void rotate180(const double *restrict in, double *restrict out)
{
    int i, j;
#pragma acc parallel loop gang present(in[0:nlen*nsys], out[0:nlen*nsys])
    for (i = nlen - 1; i >= 0; i--)
#pragma acc loop vector
        for (j = nsys - 1; j >= 0; j--)
            out[i * nsys + j] = in[(nlen - 1 - i) * nsys + (nsys - 1 - j)];
}
