// Particles as an array of structures (56-byte records: six doubles, a float, an int).
// p[i].x with unit i stride is a 56-byte stride, so a warp touches 7x the sectors of a
// structure-of-arrays layout; in the force nest every thread reads the same p[j] (broadcast).
// schedpredict-args:
#include <math.h>

#define NP 16384

struct particle {
    double x, y, z;
    double vx, vy, vz;
    float mass;
    int species;
};

static struct particle p[NP];

void accelerate(double dt, double soft2)
{
#pragma acc parallel loop gang vector copy(p)
    for (int i = 0; i < NP; i++) {
        double ax = 0.0, ay = 0.0, az = 0.0;
        for (int j = 0; j < NP; j++) {
            double dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
            double r2 = dx * dx + dy * dy + dz * dz + soft2;
            double inv = p[j].mass / (r2 * sqrt(r2));
            ax += dx * inv;
            ay += dy * inv;
            az += dz * inv;
        }
        p[i].vx += dt * ax;
        p[i].vy += dt * ay;
        p[i].vz += dt * az;
    }
}

void drift(double dt)
{
#pragma acc parallel loop present(p)
    for (int i = 0; i < NP; i++) {
        if (p[i].species != 0) {
            p[i].x += dt * p[i].vx;
            p[i].y += dt * p[i].vy;
            p[i].z += dt * p[i].vz;
        }
    }
}
