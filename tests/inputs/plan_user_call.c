/* --emit-plan: a nest that calls a function of the program cannot become a kernel; the other
 * nest of the file still does. */
#define N 1000

static double twice(double x) { return 2 * x; }

void scale(double a[N], double b[N])
{
#pragma acc parallel loop
    for (int i = 0; i < N; i++)
        a[i] = twice(a[i]);
#pragma acc parallel loop
    for (int i = 0; i < N; i++)
        b[i] = 2 * b[i];
}
