// PolyBench gesummv: y = alpha*A*x + beta*B*x. One nest, two matrices streamed along
// rows with two sum reductions in the inner loop; restrict pointers, linearized subscripts.
// schedpredict-args:
#define N 2800

void kernel_gesummv(double alpha, double beta,
                    const double *restrict A, const double *restrict B,
                    const double *restrict x, double *restrict y)
{
#pragma acc parallel loop gang copyin(A[0:N*N], B[0:N*N], x[0:N]) copyout(y[0:N])
    for (int i = 0; i < N; i++) {
        double ta = 0.0, tb = 0.0;
#pragma acc loop vector reduction(+:ta, tb)
        for (int j = 0; j < N; j++) {
            ta += A[i * N + j] * x[j];
            tb += B[i * N + j] * x[j];
        }
        y[i] = alpha * ta + beta * tb;
    }
}
