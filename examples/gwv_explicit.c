// Explicit gang / worker / vector placement with num_gangs, num_workers, vector_length:
// a 3-D second-order wave update (7-point Laplacian of u, plus u_prev) on 256^3 doubles,
// z on gangs, y on 4 workers, x on 32-wide vectors (Table 7.1's gang/worker/vector "Wave").
// schedpredict-args:
#define NX 256
#define NY 256
#define NZ 256

static double u[NZ][NY][NX], uprev[NZ][NY][NX], unext[NZ][NY][NX];

void wave_step(double c2)
{
#pragma acc parallel num_gangs(1024) num_workers(4) vector_length(32) present(u, uprev, unext)
    {
#pragma acc loop gang
        for (int k = 1; k < NZ - 1; k++)
#pragma acc loop worker
            for (int j = 1; j < NY - 1; j++)
#pragma acc loop vector
                for (int i = 1; i < NX - 1; i++)
                    unext[k][j][i] = 2.0 * u[k][j][i] - uprev[k][j][i]
                        + c2 * (u[k][j][i - 1] + u[k][j][i + 1] + u[k][j - 1][i]
                              + u[k][j + 1][i] + u[k - 1][j][i] + u[k + 1][j][i]
                              - 6.0 * u[k][j][i]);
    }
}
