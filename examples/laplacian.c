// Laplacian (kernelGen suite, dissertation 7.4): 3-D 7-point stencil on 256^3 doubles.
// The k-1/k+1 planes are 512 KiB apart, so L2 reuse depends on how the z loop is spread
// over blocks. Sizes come from -D (the file's defaults are smaller, as in a Makefile build).
// schedpredict-args: -- -DNX=256 -DNY=256 -DNZ=256
#ifndef NX
#define NX 64
#endif
#ifndef NY
#define NY 64
#endif
#ifndef NZ
#define NZ 64
#endif

void laplacian(const double w0, const double w1,
               const double u[NZ][NY][NX], double lap[NZ][NY][NX])
{
#pragma acc parallel present(u[0:NZ][0:NY][0:NX], lap[0:NZ][0:NY][0:NX])
    {
#pragma acc loop gang
        for (int k = 1; k < NZ - 1; k++)
#pragma acc loop worker
            for (int j = 1; j < NY - 1; j++)
#pragma acc loop vector
                for (int i = 1; i < NX - 1; i++)
                    lap[k][j][i] = w0 * u[k][j][i]
                                 + w1 * (u[k][j][i - 1] + u[k][j][i + 1]
                                       + u[k][j - 1][i] + u[k][j + 1][i]
                                       + u[k - 1][j][i] + u[k + 1][j][i]);
    }
}
