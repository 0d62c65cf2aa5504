/* Sizes whose byte offsets leave 64 bits. */
void big(long n, double *a) {
#pragma acc parallel loop collapse(2)
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) a[i * n + j] = 0.0;
}
