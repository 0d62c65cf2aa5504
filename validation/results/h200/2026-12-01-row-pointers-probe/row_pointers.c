void pp(int n, double **a, double *b) {
#pragma acc parallel loop present(a[0:n][0:n], b[0:n])
  for (int i = 0; i < n; i++)
#pragma acc loop vector
    for (int j = 0; j < n; j++) a[i][j] = b[j];
}
