/* No directive: nothing to schedule unless --all-loops. */
void scale(double *a) {
  for (int i = 0; i < 100; i++) a[i] *= 2.0;
}
