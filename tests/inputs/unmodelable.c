/* A while loop and a declared-parallel loop with a dependence. */
void f(int *a, double *b) {
#pragma acc parallel loop
  for (int i = 0; i < 100; i++) {
    int k = 0;
    while (a[k] != i) k++;
    a[i] = k;
  }
#pragma acc parallel loop
  for (int i = 1; i < 100; i++) b[i] = b[i - 1] + 1.0;
}
