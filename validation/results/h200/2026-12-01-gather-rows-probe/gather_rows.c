#define N 4096
#define M 256
#define XN 1048576
void rows_perm(const int *perm, const double a[N][M], double y[N][M]) {
#pragma acc parallel loop present(perm[0:N])
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j < M; j++) y[i][j] = a[perm[i]][j];
}
void rows_offset(const int *col, const double *x, double y[N][M]) {
#pragma acc parallel loop present(col[0:N], x[0:XN])
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j < M; j++) y[i][j] = x[col[i] + j];
}
void rows_groups(const int *col, const double *x, double y[N][M]) {
#pragma acc parallel loop present(col[0:N], x[0:XN])
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j < M; j++) y[i][j] = x[col[i]];
}
void lane_cols(const int *col, const double *x, double y[N][M]) {
#pragma acc parallel loop present(col[0:M], x[0:XN])
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j < M; j++) y[i][j] = x[col[j]];
}
