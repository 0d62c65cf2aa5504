/* A loop whose step is 0 (it would never end): skipped with its own message. */
void f(int n, double *a) {
#pragma acc parallel loop
  for (int i = 0; i < n; i += 0) a[i] = 1.0;
}
