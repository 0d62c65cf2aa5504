#!/usr/bin/env python3
"""Writes a synthetic C file with many OpenACC loop nests, for the analyzer benchmark.

    bench/gen_nests.py [NESTS] [LINES] > big.c     (default 200 nests, 5000 lines)

The nests cycle through the shapes the examples have (2-D and 3-D stencils, linearized and
column-major pointers, matrix products with a sequential inner loop, structs, triangular bounds),
each in its own function, padded with comment-free scalar code to reach the line count."""
import sys

nests = int(sys.argv[1]) if len(sys.argv) > 1 else 200
lines_wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 5000

head = """#define N 1024
#define M 512
struct pt { double x, y, z; float w; int tag; };
double A[N][N], B[N][N], C[N][N];
double V[64][64][64], W[64][64][64];
"""

shapes = [
    """#pragma acc parallel loop collapse(2)
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      B[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);""",
    """#pragma acc parallel loop gang
  for (int i = 0; i < n; i++) {
#pragma acc loop vector
    for (int j = 0; j < m; j++)
      a[i * m + j] = b[j * n + i] + s;
  }""",
    """#pragma acc parallel loop
  for (int i = 0; i < N; i++)
#pragma acc loop
    for (int j = 0; j < N; j++) {
      double t = 0.0;
#pragma acc loop seq
      for (int k = 0; k < M; k++) t += A[i][k] * B[k][j];
      C[i][j] = t;
    }""",
    """#pragma acc kernels
  for (int k = 1; k < 63; k++)
    for (int j = 1; j < 63; j++)
      for (int i = 1; i < 63; i++)
        W[k][j][i] = V[k - 1][j][i] + V[k + 1][j][i] + V[k][j - 1][i] + V[k][j + 1][i]
                   + V[k][j][i - 1] + V[k][j][i + 1] - 6.0 * V[k][j][i];""",
    """#pragma acc parallel loop
  for (int i = 0; i < n; i++) {
    p[i].x += s * p[i].w;
    p[i].y += s * p[i].w;
    if (i > 0) p[i].z = p[i - 1].z;
  }""",
    """#pragma acc parallel loop
  for (int i = 0; i < N; i++)
#pragma acc loop vector
    for (int j = 0; j <= i; j++) C[i][j] = A[i][j] * B[j][i];""",
]

out = [head]
count = len(head.splitlines())
per_nest = max(8, -(-(lines_wanted - count) // max(nests, 1)) + 1)
for k in range(nests):
    body = shapes[k % len(shapes)]
    fn = [f"void kernel_{k}(int n, int m, double s, double *restrict a, const double *restrict b, struct pt *p) {{"]
    pad = per_nest - len(body.splitlines()) - 3
    for q in range(max(pad, 0)):
        fn.append(f"  s = s * 0.5 + {q}.0;")
    fn.append("  " + body)
    fn.append("}")
    fn.append("")
    out.append("\n".join(fn))
sys.stdout.write("\n".join(out))
