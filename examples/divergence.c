// Divergence (kernelGen suite, dissertation 7.4): div = d(ux)/dx + d(uy)/dy + d(uz)/dz
// by central differences on 256^3 grids: three input fields, each read at two points,
// on restrict pointers with a linearized (k, j, i) subscript macro.
// schedpredict-args:
#define NX 256
#define NY 256
#define NZ 256
#define IDX(k, j, i) (((k) * NY + (j)) * NX + (i))

void divergence(double inv2dx, double inv2dy, double inv2dz,
                const double *restrict ux, const double *restrict uy,
                const double *restrict uz, double *restrict div)
{
#pragma acc parallel loop collapse(2) copyin(ux[0:NX*NY*NZ], uy[0:NX*NY*NZ], uz[0:NX*NY*NZ]) copyout(div[0:NX*NY*NZ])
    for (int k = 1; k < NZ - 1; k++) {
        for (int j = 1; j < NY - 1; j++) {
#pragma acc loop vector
            for (int i = 1; i < NX - 1; i++) {
                div[IDX(k, j, i)] = (ux[IDX(k, j, i + 1)] - ux[IDX(k, j, i - 1)]) * inv2dx
                                  + (uy[IDX(k, j + 1, i)] - uy[IDX(k, j - 1, i)]) * inv2dy
                                  + (uz[IDX(k + 1, j, i)] - uz[IDX(k - 1, j, i)]) * inv2dz;
            }
        }
    }
}
