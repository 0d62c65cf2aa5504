#define N 1000
#define M 1000
#define XN 1048576
void gather_row(const int *col, const double *x, double y[N][M]) {
#pragma acc parallel loop present(col[0:N], x[0:XN])
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j < M; j++) y[i][j] = x[col[i]];
}
void gather_lane(const int *col, const double *x, double y[N][M]) {
#pragma acc parallel loop present(col[0:M], x[0:XN])
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j < M; j++) y[i][j] = x[col[j]];
}
