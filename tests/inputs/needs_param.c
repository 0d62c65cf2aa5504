/* A run-time size with no value: the analyzer must say which --param to give. */
void scale(int n, double *a) {
#pragma acc parallel loop
  for (int i = 0; i < n; i++) a[i] *= 2.0;
}
