// The five bodies of validation/probes/nbody_body_probe.cu as OpenACC nests, for the model:
// NI particles (32: one warp; 1024: one block of 32 warps) against all NP, one block.
//   build/schedpredict nbody_variants.c --arch h200 --block 32 --gangs 1 -- -DNI=32
#define NP 16384
#ifndef NI
#define NI 32
#endif

struct particle {
    double x, y, z;
    double vx, vy, vz;
    float mass;
    int species;
};

static struct particle p[NP];

void full(double dt, double soft2)
{
#pragma acc parallel loop gang vector present(p)
    for (int i = 0; i < NI; i++) {
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int j = 0; j < NP; j++) {
            double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
            double r2 = dx * dx + dy * dy + dz * dz + soft2;
            double inv = p[j].mass / (r2 * sqrt(r2));
            ax += dx * inv; ay += dy * inv; az += dz * inv;
        }
        p[i].vx += dt * ax; p[i].vy += dt * ay; p[i].vz += dt * az;
    }
}

void nodiv(double dt, double soft2)
{
#pragma acc parallel loop gang vector present(p)
    for (int i = 0; i < NI; i++) {
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int j = 0; j < NP; j++) {
            double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
            double r2 = dx * dx + dy * dy + dz * dz + soft2;
            double inv = p[j].mass * (r2 * sqrt(r2));
            ax += dx * inv; ay += dy * inv; az += dz * inv;
        }
        p[i].vx += dt * ax; p[i].vy += dt * ay; p[i].vz += dt * az;
    }
}

void nosqrt(double dt, double soft2)
{
#pragma acc parallel loop gang vector present(p)
    for (int i = 0; i < NI; i++) {
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int j = 0; j < NP; j++) {
            double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
            double r2 = dx * dx + dy * dy + dz * dz + soft2;
            double inv = p[j].mass / (r2 * r2);
            ax += dx * inv; ay += dy * inv; az += dz * inv;
        }
        p[i].vx += dt * ax; p[i].vy += dt * ay; p[i].vz += dt * az;
    }
}

void neither(double dt, double soft2)
{
#pragma acc parallel loop gang vector present(p)
    for (int i = 0; i < NI; i++) {
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int j = 0; j < NP; j++) {
            double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
            double r2 = dx * dx + dy * dy + dz * dz + soft2;
            double inv = p[j].mass * (r2 * r2);
            ax += dx * inv; ay += dy * inv; az += dz * inv;
        }
        p[i].vx += dt * ax; p[i].vy += dt * ay; p[i].vz += dt * az;
    }
}
