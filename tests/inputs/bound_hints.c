// Bounds the model cannot read, each with the way around it that it can: a structure's member
// (copied to a local and given with --param), and a tile's min() bound (the other bound as a guard).
#define MIN(a, b) ((a) < (b) ? (a) : (b))
struct dims { long n, m; };

void member_bound(struct dims d, double *restrict a)
{
#pragma acc parallel loop copy(a[0:d.n])
    for (long i = 0; i < d.n; i++)
        a[i] *= 2.0;
}

void member_local(struct dims d, double *restrict a)
{
    long n = d.n;
#pragma acc parallel loop copy(a[0:n])
    for (long i = 0; i < n; i++)
        a[i] *= 2.0;
}

void tile_min(double *restrict a)
{
#pragma acc parallel loop
    for (int ii = 0; ii < 1000; ii += 32)
        for (int i = ii; i < MIN(ii + 32, 1000); i++)
            a[i] *= 2.0;
}

void tile_guard(double *restrict a)
{
#pragma acc parallel loop
    for (int ii = 0; ii < 1000; ii += 32)
        for (int i = ii; i < ii + 32; i++)
            if (i < 1000)
                a[i] *= 2.0;
}
